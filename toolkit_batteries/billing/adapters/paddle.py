"""Paddle Billing (adapter ``paddle``, canonical ``billing_b``) through the official SDK.

Calls go through ``paddle_billing.Client`` (JSON bodies, ``Authorization: Bearer
<api_key>``, ``Paddle-Version: 1``, the SDK's error parsing into ``ApiError``):

=========================  ==============================================================
``create_customer``        ``POST /customers``
``create_subscription``    ``POST /transactions``: Paddle creates the subscription when the
                           customer pays, so the answer is ``incomplete``, keyed by the
                           transaction id (``reference``) with its ``checkout_url``; the
                           ``subscription.created`` webhook re-keys the row to the
                           subscription's id. Trials come from the price: ``trial_days``
                           is refused.
``get_subscription``       ``GET /subscriptions/{id}``
``cancel_subscription``    ``POST /subscriptions/{id}/cancel`` (``effective_from``
                           ``immediately`` or ``next_billing_period``)
``list_invoices``          ``GET /transactions?customer_id=...`` (billed transactions)
``checkout_url``           ``POST /transactions`` (its ``checkout.url``)
``portal_url``             ``POST /customers/{id}/portal-sessions``
=========================  ==============================================================

Responses are read from the SDK's raw answers (``client.post_raw``/``get_raw``) rather
than its entity classes, which insist on every field of an object. ``endpoint``
replaces the API origin; otherwise ``sandbox`` picks ``https://sandbox-api.paddle.com``
over ``https://api.paddle.com`` (the SDK's ``Environment``). The SDK's ``requests``
session keeps its headers but its transports are replaced by the guarded ones of
:mod:`toolkit_batteries.core.outbound.requests_adapter` (https only unless
``allow_insecure``, public addresses only unless ``allow_private``, no redirects, no
environment proxy); the SDK's retries are off.

**Webhooks.** ``Paddle-Signature: ts=<unix>;h1=<hex HMAC-SHA256 of "<ts>:<body>">`` is
checked by :mod:`toolkit_batteries.core.webhook_signatures` (constant-time comparison,
the timestamp against ``webhook_tolerance`` on the battery's clock). The SDK's
``Verifier`` is not used: it skips the timestamp check when the ``TEST_MODE`` environment
variable is set.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from toolkit_batteries.core.adapter import ClosedResource
from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.core.outbound import OutboundBlockedError, provider
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.core.webhook_signatures import PADDLE

from ..base import Customer, Invoice, Subscription, WebhookEvent, WebhookSignatureError
from ..states import SubscriptionStatus, parse_status
from ._common import CALLS, TIMEOUT, ProviderBilling

with MissingExtraError.guard("billing", "billing_b", "billing", "paddle_billing"):
    import requests
    from paddle_billing import Client, Environment, Options
    from paddle_billing.Exceptions.ApiError import ApiError

__all__ = ["TIMEOUT", "PaddleBilling", "subscription_from"]

#: What a call may raise besides a bug: the SDK's errors, the transport's, the guard's,
#: and an answer that is not the JSON expected.
_FAILURES = (ApiError, requests.RequestException, OutboundBlockedError, ValueError, AttributeError)


class _Origin:
    """What the SDK reads from ``Options.environment``: the API origin."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url


def _when(value: Any) -> float | None:
    """Unix seconds of an RFC 3339 time (``2024-04-12T10:18:49.621Z``), or ``None``."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def subscription_from(data: Mapping[str, Any], *, instance: str = "default") -> Subscription:
    """Build a :class:`Subscription` from a subscription object (API answer or event)."""
    items = data.get("items") or [{}]
    price = (items[0] or {}).get("price") or {}
    change = data.get("scheduled_change") or {}
    period = data.get("current_billing_period") or {}
    return Subscription(
        id=str(data.get("id") or ""),
        customer_id=str(data.get("customer_id") or ""),
        status=parse_status(str(data.get("status") or ""), instance=instance),
        price_id=str(price.get("id") or ""),
        current_period_end=_when(period.get("ends_at")),
        cancel_at_period_end=change.get("action") == "cancel",
        reference=str(data.get("transaction_id") or ""),
    )


@traced(*CALLS)
class PaddleBilling(ProviderBilling):
    """Paddle Billing through ``paddle_billing.Client`` on guarded transports."""

    adapter_name = "billing_b"
    scheme = PADDLE

    def __init__(self, options: Any, **kwargs: Any) -> None:
        """Check the options and build the SDK client (nothing is sent yet)."""
        super().__init__(options, **kwargs)
        default = Environment.SANDBOX if options.sandbox else Environment.PRODUCTION
        key = self._prelude(options, "api_key", default.base_url)
        self._client = Client(
            key,
            options=Options(environment=_Origin(self.endpoint), retries=0),  # type: ignore[arg-type]
            retry_count=0,
            timeout=TIMEOUT,
        )
        session = provider.guard_session(self._client.client, self._endpoint)
        self._session = session

    def close(self) -> None:
        self._client = ClosedResource("billing", self.instance)  # type: ignore[assignment]
        self._session.close()

    # ------------------------------------------------------------------ calls

    def _create_customer(self, email: str, name: str, key: str | None) -> Customer:
        payload = {"email": email, **({"name": name} if name else {})}
        data = self._call("create_customer", "post", "/customers", payload)
        return Customer(
            str(data["id"]), str(data.get("email") or email), str(data.get("name") or "")
        )

    def _transaction(self, operation: str, customer_id: str, price_id: str) -> Mapping[str, Any]:
        payload = {"items": [{"price_id": price_id, "quantity": 1}], "customer_id": customer_id}
        return self._call(operation, "post", "/transactions", payload)

    def _create_subscription(
        self, customer_id: str, price_id: str, trial_days: int, key: str | None
    ) -> Subscription:
        if trial_days:
            raise ValueError(
                f"billing.{self.instance}: billing_b takes trials from the price, not trial_days"
            )
        data = self._transaction("create_subscription", customer_id, price_id)
        ident = str(data["id"])
        return Subscription(
            id=ident,
            customer_id=str(data.get("customer_id") or customer_id),
            status=SubscriptionStatus.INCOMPLETE,
            price_id=price_id,
            reference=ident,
            checkout_url=str((data.get("checkout") or {}).get("url") or ""),
        )

    def _get_subscription(self, subscription_id: str) -> Subscription:
        data = self._call(
            "get_subscription", "get", f"/subscriptions/{_segment(subscription_id)}", found=True
        )
        return subscription_from(data, instance=self.instance)

    def _cancel_subscription(
        self, subscription_id: str, at_period_end: bool, key: str | None
    ) -> Subscription:
        when = "next_billing_period" if at_period_end else "immediately"
        data = self._call(
            "cancel_subscription",
            "post",
            f"/subscriptions/{_segment(subscription_id)}/cancel",
            {"effective_from": when},
            found=True,
        )
        return subscription_from(data, instance=self.instance)

    def _list_invoices(self, customer_id: str, limit: int) -> list[Invoice]:
        rows = self._call(
            "list_invoices",
            "get",
            "/transactions",
            params={
                "customer_id": customer_id,
                "per_page": str(limit),
                "order_by": "created_at[DESC]",
            },
        )
        found = []
        for row in rows or []:
            totals = (row.get("details") or {}).get("totals") or {}
            found.append(
                Invoice(
                    id=str(row.get("id") or ""),
                    customer_id=str(row.get("customer_id") or ""),
                    status=str(row.get("status") or ""),
                    amount_due=int(totals.get("grand_total") or 0),
                    currency=str(row.get("currency_code") or ""),
                    subscription_id=str(row.get("subscription_id") or ""),
                )
            )
        return found[:limit]

    def _checkout_url(
        self, customer_id: str, price_id: str, success_url: str, cancel_url: str
    ) -> str:
        data = self._transaction("checkout_url", customer_id, price_id)
        return str((data.get("checkout") or {}).get("url") or "")

    def _portal_url(self, customer_id: str, return_url: str) -> str:
        data = self._call(
            "portal_url", "post", f"/customers/{_segment(customer_id)}/portal-sessions", {}
        )
        return str(((data.get("urls") or {}).get("general") or {}).get("overview") or "")

    def ping(self) -> None:
        """One cheap authenticated call (``GET /event-types``): raises when unreachable."""
        self._call("ping", "get", "/event-types")

    # ------------------------------------------------------------------ webhooks

    def _event(self, payload: Mapping[str, Any]) -> WebhookEvent:
        kind = str(payload.get("event_type") or "")
        data = payload.get("data")
        subscription = None
        if kind.startswith("subscription.") and isinstance(data, Mapping):
            try:
                subscription = subscription_from(data, instance=self.instance)
            except ValueError:
                raise WebhookSignatureError(self.instance, "unknown subscription status") from None
        return WebhookEvent(
            id=str(payload.get("event_id") or ""),
            type=kind,
            created=_when(payload.get("occurred_at")) or 0.0,
            subscription=subscription,
            data=data if isinstance(data, Mapping) else {},
        )

    # ------------------------------------------------------------------ plumbing

    def _call(
        self,
        operation: str,
        verb: str,
        path: str,
        payload: Any = None,
        *,
        params: Mapping[str, str] | None = None,
        found: bool = False,
    ) -> Any:
        """Run one SDK request; return the answer's ``data``; map errors without their text."""
        try:
            if verb == "get":
                response = self._client.get_raw(path, dict(params) if params else None)
            else:
                response = self._client.post_raw(path, payload)
            return response.json().get("data")
        except _FAILURES as exc:
            # The SDK may break reading an error (``int("0.05")`` for a fractional
            # Retry-After): the code is then read from the answer behind it.
            code = getattr(exc, "error_code", "") or (
                (provider.error_body(exc).get("error") or {}).get("code", "")
            )
            self._failed(operation, exc, code=code, found=found)


def _segment(value: str) -> str:
    """Quote an id for a URL path segment (an id with ``/`` cannot reach another path)."""
    from urllib.parse import quote

    return quote(value, safe="")
