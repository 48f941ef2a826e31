"""The ``billing_a`` adapter (alias ``stripe``): Stripe Billing through the official SDK.

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

import json
from collections.abc import Mapping
from typing import Any, Self

from toolkit_batteries.core import webhook_signatures
from toolkit_batteries.core.adapter import ClosedResource, OpenContext
from toolkit_batteries.core.errors import (
    InvalidOptionsError,
    MissingExtraError,
    ServiceUnavailableError,
)
from toolkit_batteries.core.outbound import check_url, is_blocked
from toolkit_batteries.core.tracing import traced

from ..base import (
    Billing,
    Customer,
    Invoice,
    ProviderError,
    Subscription,
    SubscriptionNotFoundError,
    WebhookEvent,
    WebhookSignatureError,
    warn_lifted,
)
from ..states import parse_status

try:
    import stripe

    from toolkit_batteries.core.outbound.requests_adapter import guarded_session
except ImportError:  # pragma: no cover - the billing extra is part of dev installs
    raise MissingExtraError("billing", "billing_a", "billing", "stripe") from None

__all__ = ["DEFAULT_ENDPOINT", "TIMEOUT", "BillingA", "subscription_from"]

#: The provider's API origin, used when ``endpoint`` is empty.
DEFAULT_ENDPOINT = "https://api.stripe.com"
#: Seconds before a request gives up.
TIMEOUT = 30.0
#: The signature header of the provider's webhooks.
SIGNATURE_HEADER = "Stripe-Signature"


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


@traced(
    "_create_customer",
    "_create_subscription",
    "_get_subscription",
    "_cancel_subscription",
    "_list_invoices",
    "_checkout_url",
    "_portal_url",
    "ping",
)
class BillingA(Billing):
    """Stripe Billing through ``stripe.StripeClient`` on a guarded ``requests`` session."""

    adapter_name = "billing_a"

    def __init__(self, options: Any, **kwargs: Any) -> None:
        """Check the options and build the SDK client (nothing is sent yet)."""
        super().__init__(options, **kwargs)
        instance = self.instance
        key = (options.secret_key or "").strip()
        if not key:
            raise InvalidOptionsError(
                "billing", "secret_key", "is required by the billing_a adapter", instance=instance
            )
        if options.sandbox and not key.startswith(("sk_test_", "rk_test_")):
            raise InvalidOptionsError(
                "billing",
                "secret_key",
                "must be a test-mode key when sandbox is set",
                instance=instance,
            )
        allow_insecure, allow_private = bool(options.allow_insecure), bool(options.allow_private)
        self.endpoint = check_url(
            (options.endpoint or "").strip() or DEFAULT_ENDPOINT,
            service="billing",
            field="endpoint",
            instance=instance,
            allow_insecure=allow_insecure,
            allow_private=allow_private,
        ).rstrip("/")
        self._webhook_secret = options.webhook_secret or ""
        self._session = guarded_session(allow_insecure=allow_insecure, allow_private=allow_private)
        self._client = stripe.StripeClient(
            key,
            base_addresses={"api": self.endpoint},
            http_client=stripe.RequestsClient(session=self._session, timeout=TIMEOUT),
            max_network_retries=0,
        )
        self._v1 = self._client.v1

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        found = cls(ctx.options, **cls.open_parts(ctx))
        warn_lifted(ctx)
        return found

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

    def _verify_webhook(self, body: bytes, headers: Mapping[str, str]) -> tuple[float, Any]:
        stamp = webhook_signatures.verify(
            webhook_signatures.STRIPE,
            headers.get(SIGNATURE_HEADER),
            body,
            self._webhook_secret,
            tolerance=self.webhook_tolerance,
            now=self.clock,
            fail=lambda reason: WebhookSignatureError(self.instance, reason),
        )
        try:
            return float(stamp), json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise WebhookSignatureError(self.instance, "body is not JSON") from None

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
        except stripe.APIConnectionError as exc:
            if is_blocked(exc):
                raise InvalidOptionsError(
                    "billing",
                    "endpoint",
                    "resolves to a private, loopback or link-local address; set allow_private",
                    instance=self.instance,
                ) from None
            raise ServiceUnavailableError(
                "billing", f"{operation} failed (no answer)", instance=self.instance
            ) from None
        except stripe.StripeError as exc:
            status = getattr(exc, "http_status", None)
            if status == 404 and ident is not None:
                raise SubscriptionNotFoundError(self.instance) from None
            code = str(getattr(exc, "code", "") or "")
            raise ProviderError(
                self.instance, operation, status, code if code.isidentifier() else ""
            ) from None
