"""Stripe Billing (adapter ``stripe``, canonical ``billing_a``) through the official SDK.

Calls go through ``stripe.StripeClient`` (``/v1/customers``, ``/v1/subscriptions``,
``/v1/invoices``, ``/v1/checkout/sessions``, ``/v1/billing_portal/sessions``, form-encoded,
``Authorization: Bearer <secret_key>``). ``endpoint`` replaces ``https://api.stripe.com``
(a local fake in tests). The SDK's HTTP client is a ``requests`` session from
:mod:`toolkit_batteries.core.outbound.requests_adapter`: https only unless
``allow_insecure``, public addresses only unless ``allow_private`` (checked on every
address the host resolves to), no redirects, no environment proxy. The SDK's own retries
are off (``max_network_retries=0``); a mutation with an ``idempotency_key`` sends it as
``Idempotency-Key``, so a caller's retry is safe at Stripe too.

``sandbox`` requires a test-mode key (``sk_test_``/``rk_test_``): Stripe has no separate
sandbox host, test mode is the key's.

**Webhooks.** ``Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`` is
checked by :mod:`toolkit_batteries.core.webhook_signatures` (the payment battery's check:
constant-time comparison, any ``v1`` may match, for secret rotation, and the timestamp
against ``webhook_tolerance`` on the battery's clock, which Stripe's helper cannot take).
``customer.subscription.*`` events carry the subscription; other events are acknowledged
and ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolkit_batteries.core.adapter import ClosedResource
from toolkit_batteries.core.errors import InvalidOptionsError, MissingExtraError
from toolkit_batteries.core.outbound import OutboundBlockedError, provider
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.core.webhook_signatures import STRIPE

from ..base import Customer, Invoice, Subscription, WebhookEvent, WebhookSignatureError
from ..states import parse_status
from ._common import CALLS, TIMEOUT, ProviderBilling

with MissingExtraError.guard("billing", "billing_a", "billing", "stripe"):
    import stripe

__all__ = ["DEFAULT_ENDPOINT", "TIMEOUT", "StripeBilling", "subscription_from"]

#: The provider's API origin, used when ``endpoint`` is empty.
DEFAULT_ENDPOINT = "https://api.stripe.com"


def _get(obj: Any, *path: str | int) -> Any:
    """Follow ``path`` through dicts, lists and SDK objects; ``None`` when absent."""
    for step in path:
        if obj is None:
            return None
        try:
            obj = obj[step]
        except (KeyError, IndexError, TypeError, AttributeError):
            return None
    return obj


def _id(value: Any) -> str:
    """Return the id of a field the API may expand into an object."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return str(_get(value, "id") or "")


def subscription_from(obj: Any, *, instance: str = "default") -> Subscription:
    """Build a :class:`Subscription` from a subscription object (API answer or event)."""
    period_end = _get(obj, "current_period_end") or _get(
        obj, "items", "data", 0, "current_period_end"
    )
    return Subscription(
        id=str(_get(obj, "id") or ""),
        customer_id=_id(_get(obj, "customer")),
        status=parse_status(str(_get(obj, "status") or ""), instance=instance),
        price_id=_id(_get(obj, "items", "data", 0, "price")),
        current_period_end=float(period_end) if period_end else None,
        cancel_at_period_end=bool(_get(obj, "cancel_at_period_end")),
    )


@traced(*CALLS)
class StripeBilling(ProviderBilling):
    """Stripe Billing through ``stripe.StripeClient`` on a guarded ``requests`` session."""

    adapter_name = "billing_a"
    scheme = STRIPE

    def __init__(self, options: Any, **kwargs: Any) -> None:
        """Check the options and build the SDK client (nothing is sent yet)."""
        super().__init__(options, **kwargs)
        key = self._prelude(options, "secret_key", DEFAULT_ENDPOINT)
        if options.sandbox and not key.startswith(("sk_test_", "rk_test_")):
            raise InvalidOptionsError(
                "billing",
                "secret_key",
                "must be a test-mode key when sandbox is set",
                instance=self.instance,
            )
        self._session = provider.requests_session(self._endpoint)
        self._client = stripe.StripeClient(
            key,
            base_addresses={"api": self.endpoint},
            http_client=stripe.RequestsClient(session=self._session, timeout=TIMEOUT),
            max_network_retries=0,
        )
        self._v1 = self._client.v1

    def close(self) -> None:
        self._v1 = self._client = ClosedResource("billing", self.instance)  # type: ignore[assignment]
        self._session.close()

    # ------------------------------------------------------------------ calls

    def _create_customer(self, email: str, name: str, key: str | None) -> Customer:
        params = {"email": email, **({"name": name} if name else {})}
        obj = self._call("create_customer", self._v1.customers.create, params, key=key)
        return Customer(str(obj["id"]), str(obj.get("email") or email), str(obj.get("name") or ""))

    def _create_subscription(
        self, customer_id: str, price_id: str, trial_days: int, key: str | None
    ) -> Subscription:
        params: dict[str, Any] = {"customer": customer_id, "items": [{"price": price_id}]}
        if trial_days:
            params["trial_period_days"] = trial_days
        obj = self._call("create_subscription", self._v1.subscriptions.create, params, key=key)
        return subscription_from(obj, instance=self.instance)

    def _get_subscription(self, subscription_id: str) -> Subscription:
        obj = self._call(
            "get_subscription", self._v1.subscriptions.retrieve, None, ident=subscription_id
        )
        return subscription_from(obj, instance=self.instance)

    def _cancel_subscription(
        self, subscription_id: str, at_period_end: bool, key: str | None
    ) -> Subscription:
        if at_period_end:
            obj = self._call(
                "cancel_subscription",
                self._v1.subscriptions.update,
                {"cancel_at_period_end": True},
                key=key,
                ident=subscription_id,
            )
        else:
            obj = self._call(
                "cancel_subscription",
                self._v1.subscriptions.cancel,
                None,
                key=key,
                ident=subscription_id,
            )
        return subscription_from(obj, instance=self.instance)

    def _list_invoices(self, customer_id: str, limit: int) -> list[Invoice]:
        page = self._call(
            "list_invoices", self._v1.invoices.list, {"customer": customer_id, "limit": limit}
        )
        return [
            Invoice(
                id=str(item["id"]),
                customer_id=_id(item.get("customer")),
                status=str(item.get("status") or ""),
                amount_due=int(item.get("amount_due") or 0),
                currency=str(item.get("currency") or ""),
                subscription_id=_id(
                    item.get("subscription")
                    or _get(item, "parent", "subscription_details", "subscription")
                ),
                hosted_url=str(item.get("hosted_invoice_url") or ""),
            )
            for item in (_get(page, "data") or [])
        ]

    def _checkout_url(
        self, customer_id: str, price_id: str, success_url: str, cancel_url: str
    ) -> str:
        params: dict[str, Any] = {
            "mode": "subscription",
            "customer": customer_id,
            "line_items": [{"price": price_id, "quantity": 1}],
            "success_url": success_url,
        }
        if cancel_url:
            params["cancel_url"] = cancel_url
        obj = self._call("checkout_url", self._v1.checkout.sessions.create, params)
        return str(obj["url"])

    def _portal_url(self, customer_id: str, return_url: str) -> str:
        params = {"customer": customer_id, **({"return_url": return_url} if return_url else {})}
        obj = self._call("portal_url", self._v1.billing_portal.sessions.create, params)
        return str(obj["url"])

    def ping(self) -> None:
        """One cheap authenticated call (``GET /v1/balance``): raises when unreachable."""
        self._call("ping", self._v1.balance.retrieve, None)

    # ------------------------------------------------------------------ webhooks

    def _event(self, payload: Mapping[str, Any]) -> WebhookEvent:
        kind = str(payload.get("type") or "")
        obj = _get(payload, "data", "object")
        subscription = None
        if kind.startswith("customer.subscription.") and isinstance(obj, Mapping):
            try:
                subscription = subscription_from(obj, instance=self.instance)
            except ValueError:
                raise WebhookSignatureError(self.instance, "unknown subscription status") from None
        return WebhookEvent(
            id=str(payload.get("id") or ""),
            type=kind,
            created=float(payload.get("created") or 0),
            subscription=subscription,
            data=obj if isinstance(obj, Mapping) else {},
        )

    # ------------------------------------------------------------------ plumbing

    def _call(
        self,
        operation: str,
        method: Any,
        params: Any,
        *,
        key: str | None = None,
        ident: str | None = None,
    ) -> Any:
        """Run one SDK call; map its errors to the battery's, without their text."""
        options = {"idempotency_key": key} if key else None
        args = (ident,) if ident is not None else ()
        try:
            answer = method(*args, params=params, options=options)
            # StripeObject is not a dict in this SDK: work on plain data.
            return answer.to_dict() if hasattr(answer, "to_dict") else answer
        except (stripe.StripeError, OutboundBlockedError) as exc:
            # The SDK leaves ``code`` empty on some classes (RateLimitError): the error
            # object parsed from the body still has it.
            code = getattr(exc, "code", "") or getattr(getattr(exc, "error", None), "code", "")
            self._failed(operation, exc, code=code, found=ident is not None)
