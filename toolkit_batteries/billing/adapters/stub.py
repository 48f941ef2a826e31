"""The ``stub`` adapter: billing without a provider, for development and tests.

Customers, subscriptions and invoices live in this process. A new subscription starts
``incomplete`` (payment pending), or ``active`` (``trialing`` with ``trial_days``) when
``auto_approve`` is set; its invoice is ``open`` or ``paid`` accordingly, for zero. The
stub **holds no funds and verifies no webhook**: every webhook is refused (there is no
provider to sign one), and opening it logs exactly that, so a production settings file
left on the stub is noticed. Subscriptions are still recorded through the state machine,
like every adapter's.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar, Self

from toolkit_batteries.core.adapter import OpenContext

from ..base import (
    Billing,
    Customer,
    Invoice,
    Subscription,
    SubscriptionNotFoundError,
    WebhookEvent,
    WebhookSignatureError,
)
from ..states import SubscriptionStatus

__all__ = ["CHECKOUT_BASE", "StubBilling"]

#: Where the stub's checkout and portal "pages" are (a reserved, unresolvable domain).
CHECKOUT_BASE = "https://billing.invalid/stub"
#: Length of a stub period (30 days), for ``current_period_end``.
PERIOD = 30 * 86400.0


class StubBilling(Billing):
    """In-process billing: no provider, no funds, no webhooks."""

    adapter_name = "stub"
    holds_funds: ClassVar[bool] = False

    def __init__(self, options: Any, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        self.auto_approve = bool(options.auto_approve)
        self._lock = threading.Lock()
        self._customers: dict[str, Customer] = {}
        self._subscriptions: dict[str, Subscription] = {}
        self._invoices: dict[str, list[Invoice]] = {}

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        found = cls(ctx.options, **cls.open_parts(ctx))
        ctx.logger.warning(
            "billing.%s: the stub adapter holds no funds and verifies no webhook "
            "(subscriptions start %s); configure billing_a or billing_b to bill",
            ctx.instance,
            "active" if found.auto_approve else "incomplete",
        )
        return found

    def _create_customer(self, email: str, name: str, key: str | None) -> Customer:
        customer = Customer(f"cus_stub_{secrets.token_hex(8)}", email, name)
        with self._lock:
            self._customers[customer.id] = customer
        return customer

    def _create_subscription(
        self, customer_id: str, price_id: str, trial_days: int, key: str | None
    ) -> Subscription:
        now = self.clock()
        if not self.auto_approve:
            status = SubscriptionStatus.INCOMPLETE
        elif trial_days:
            status = SubscriptionStatus.TRIALING
        else:
            status = SubscriptionStatus.ACTIVE
        ident = f"sub_stub_{secrets.token_hex(8)}"
        period_end = now + (trial_days * 86400.0 if trial_days else PERIOD)
        subscription = Subscription(ident, customer_id, status, price_id, period_end)
        invoice = Invoice(
            f"in_stub_{secrets.token_hex(8)}",
            customer_id,
            "paid" if self.auto_approve else "open",
            0,
            "usd",
            ident,
            f"{CHECKOUT_BASE}/invoice/{ident}",
        )
        with self._lock:
            self._subscriptions[ident] = subscription
            self._invoices.setdefault(customer_id, []).insert(0, invoice)
        return subscription

    def _get_subscription(self, subscription_id: str) -> Subscription:
        with self._lock:
            found = self._subscriptions.get(subscription_id)
        if found is None:
            raise SubscriptionNotFoundError(self.instance)
        return found

    def _cancel_subscription(
        self, subscription_id: str, at_period_end: bool, key: str | None
    ) -> Subscription:
        with self._lock:
            found = self._subscriptions.get(subscription_id)
            if found is None:
                raise SubscriptionNotFoundError(self.instance)
            if at_period_end:
                changed = replace(found, cancel_at_period_end=True)
            else:
                changed = replace(found, status=SubscriptionStatus.CANCELED)
            self._subscriptions[subscription_id] = changed
        return changed

    def _list_invoices(self, customer_id: str, limit: int) -> list[Invoice]:
        with self._lock:
            return list(self._invoices.get(customer_id, ())[:limit])

    def _checkout_url(
        self, customer_id: str, price_id: str, success_url: str, cancel_url: str
    ) -> str:
        return f"{CHECKOUT_BASE}/checkout/{secrets.token_urlsafe(12)}"

    def _portal_url(self, customer_id: str, return_url: str) -> str:
        return f"{CHECKOUT_BASE}/portal/{secrets.token_urlsafe(12)}"

    def _verify_webhook(self, body: bytes, headers: Mapping[str, str]) -> tuple[float, Any]:
        raise WebhookSignatureError(self.instance, "the stub adapter verifies no webhook")

    def _event(self, payload: Mapping[str, Any]) -> WebhookEvent:  # pragma: no cover
        raise WebhookSignatureError(self.instance, "the stub adapter verifies no webhook")
