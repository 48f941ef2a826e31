"""The ``stub`` adapter: payments in the books only, for development and tests.

It holds no funds and talks to no provider: a new payment is ``pending`` (or
``succeeded``, ``authorized`` with ``capture=False``, under ``auto_approve``); capture,
cancel and refund succeed at once. Its webhooks are **not verified**: any JSON body of
the shape ``{"id": "evt_1", "type": "payment.succeeded", "payment_id": "stub_..."}``
moves the payment it names. It says so in a warning when it opens; never expose its
webhook view on a public deployment.
"""

from __future__ import annotations

import uuid
from typing import Any

from toolkit_batteries.core.adapter import OpenContext

from ..base import NewPayment, Payment, ProviderPayment, ProviderRefund, WebhookEvent
from ..states import PaymentState

__all__ = ["StubPayment"]


class StubPayment(Payment):
    """Payments recorded in the ``db`` service's tables, with no provider behind them."""

    adapter_name = "stub"

    @classmethod
    def open(cls, ctx: OpenContext) -> StubPayment:
        """Reach the tables and the idempotency store; warn that nothing is real."""
        ctx.logger.warning(
            "payment.%s: the stub adapter holds no funds and verifies no webhook signature; "
            "do not use it in production",
            ctx.instance,
        )
        return cls(**cls.common_kwargs(ctx))

    def _create(self, new: NewPayment) -> ProviderPayment:
        if not self.auto_approve:
            state = PaymentState.PENDING
        else:
            state = PaymentState.SUCCEEDED if new.capture else PaymentState.AUTHORIZED
        return ProviderPayment(f"stub_{uuid.uuid4().hex}", state, state.value)

    def _retrieve(self, record: Any) -> ProviderPayment:
        return ProviderPayment(record.provider_id, record.payment_state, record.provider_status)

    def _capture(self, record: Any, amount: int | None) -> ProviderPayment:
        return ProviderPayment(record.provider_id, PaymentState.SUCCEEDED, "succeeded")

    def _cancel(self, record: Any) -> ProviderPayment:
        return ProviderPayment(record.provider_id, PaymentState.CANCELED, "canceled")

    def _refund(
        self, record: Any, amount: int, reason: str, idempotency_key: str
    ) -> ProviderRefund:
        return ProviderRefund(f"stub_re_{uuid.uuid4().hex}", "succeeded")

    def _parse_event(self, payload: dict[str, Any]) -> WebhookEvent:
        kind = str(payload["type"])
        prefix, _, state = kind.partition(".")
        return WebhookEvent(
            id=str(payload.get("id", "")),
            type=kind,
            provider_id=str(payload.get("payment_id", "")),
            state=PaymentState(state) if prefix == "payment" else None,
            data=payload,
        )
