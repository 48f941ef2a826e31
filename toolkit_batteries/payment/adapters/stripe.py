"""Stripe (adapter ``stripe``, canonical ``payment_a``): PaymentIntents and Refunds, official SDK.

The official SDK's ``StripeClient`` does the wire work (form-encoded bodies, the
``Authorization: Bearer <secret_key>`` header, ``Idempotency-Key`` headers and its own
network retries under one key, error bodies into typed errors). Its base address is
``endpoint`` (default ``https://api.stripe.com``) and its HTTP client is the SDK's
``RequestsClient`` on a session of :mod:`toolkit_batteries.core.outbound`'s guarded
transport, so an endpoint resolving to a private address is refused unless
``allow_private`` and plain http unless ``allow_insecure``.

Webhooks carry ``Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">``, verified
against ``webhook_secret`` (``whsec_...``) with :mod:`..signatures`.

State mapping of a PaymentIntent's ``status``: ``requires_payment_method`` (after a
declined attempt: ``failed``), ``requires_confirmation``, ``requires_action`` and
``processing`` are ``pending``; ``requires_capture`` is ``authorized``; ``succeeded``
and ``canceled`` are themselves.
"""

from __future__ import annotations

from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError, MissingExtraError
from toolkit_batteries.core.outbound import provider
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.core.webhook_signatures import STRIPE

from ..base import NewPayment, ProviderPayment, ProviderRefund, WebhookEvent
from ..states import PaymentState
from ._common import SDKPayment, endpoint_of

with MissingExtraError.guard("payment", "payment_a", "payment", "stripe"):
    import stripe

__all__ = ["DEFAULT_ENDPOINT", "SCHEME", "StripePayment"]

DEFAULT_ENDPOINT = "https://api.stripe.com"
#: ``Stripe-Signature: t=...,v1=...`` over ``f"{t}.{body}"``.
SCHEME = STRIPE
#: Stripe's own reasons; any other reason text goes into the refund's metadata.
_STRIPE_REASONS = ("duplicate", "fraudulent", "requested_by_customer")

_STATUS = {
    "requires_payment_method": PaymentState.PENDING,
    "requires_confirmation": PaymentState.PENDING,
    "requires_action": PaymentState.PENDING,
    "processing": PaymentState.PENDING,
    "requires_capture": PaymentState.AUTHORIZED,
    "succeeded": PaymentState.SUCCEEDED,
    "canceled": PaymentState.CANCELED,
}

_EVENTS = {
    "payment_intent.created": PaymentState.PENDING,
    "payment_intent.processing": PaymentState.PENDING,
    "payment_intent.requires_action": PaymentState.PENDING,
    "payment_intent.amount_capturable_updated": PaymentState.AUTHORIZED,
    "payment_intent.succeeded": PaymentState.SUCCEEDED,
    "payment_intent.payment_failed": PaymentState.FAILED,
    "payment_intent.canceled": PaymentState.CANCELED,
}


def _state(intent: Any) -> PaymentState:
    status = str(intent.get("status") or "")
    if status == "requires_payment_method" and intent.get("last_payment_error"):
        return PaymentState.FAILED
    return _STATUS.get(status, PaymentState.PENDING)


@traced("_create", "_retrieve", "_capture", "_cancel", "_refund")
class StripePayment(SDKPayment):
    """A PaymentIntents provider reached through its official SDK."""

    adapter_name = "payment_a"
    signature_scheme = SCHEME

    @classmethod
    def open(cls, ctx: OpenContext) -> StripePayment:
        """Check key and endpoint, build the SDK client on the guarded transport."""
        options = ctx.options
        key = cls._required(ctx, "secret_key")
        if options.sandbox and key.startswith(("sk_live_", "rk_live_")):
            raise InvalidOptionsError(
                "payment", "secret_key", "is a live key but sandbox is on", instance=ctx.instance
            )
        ep = endpoint_of(ctx, DEFAULT_ENDPOINT)
        session = provider.requests_session(ep)
        client = stripe.StripeClient(
            options.secret_key,
            base_addresses={"api": ep.url},
            http_client=stripe.RequestsClient(session=session, timeout=30),
            max_network_retries=2,
        )
        return cls(client, key, **cls.common_kwargs(ctx))

    def _call(self, operation: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        """Run one SDK call; turn its errors into the battery's (never a secret inside)."""
        try:
            found = call(*args, **kwargs)
        except stripe.StripeError as exc:
            error = exc.error
            raise self._failed(
                operation,
                exc,
                code=exc.code or getattr(error, "type", ""),
                message=getattr(error, "message", ""),
            ) from None
        return found.to_dict()  # StripeObject is no longer a dict subclass

    @staticmethod
    def _options(idempotency_key: str) -> dict[str, Any]:
        return {"idempotency_key": idempotency_key} if idempotency_key else {}

    def _create(self, new: NewPayment) -> ProviderPayment:
        params: dict[str, Any] = {
            "amount": new.amount,
            "currency": new.currency.lower(),
            "capture_method": "automatic" if new.capture else "manual",
            "metadata": {**new.metadata, "toolkit_payment_id": new.payment_id},
        }
        if new.description:
            params["description"] = new.description
        intent = self._call(
            "create",
            self._client.v1.payment_intents.create,
            params=params,
            options=self._options(new.idempotency_key),
        )
        return self._found(intent)

    def _retrieve(self, record: Any) -> ProviderPayment:
        intent = self._call(
            "retrieve", self._client.v1.payment_intents.retrieve, record.provider_id
        )
        return self._found(intent)

    def _capture(self, record: Any, amount: int | None) -> ProviderPayment:
        params = {"amount_to_capture": amount} if amount is not None else {}
        intent = self._call(
            "capture", self._client.v1.payment_intents.capture, record.provider_id, params=params
        )
        return self._found(intent)

    def _cancel(self, record: Any) -> ProviderPayment:
        intent = self._call("cancel", self._client.v1.payment_intents.cancel, record.provider_id)
        return self._found(intent)

    def _refund(
        self, record: Any, amount: int, reason: str, idempotency_key: str
    ) -> ProviderRefund:
        params: dict[str, Any] = {"payment_intent": record.provider_id, "amount": amount}
        if reason in _STRIPE_REASONS:
            params["reason"] = reason
        elif reason:
            params["metadata"] = {"reason": reason}
        refund = self._call(
            "refund",
            self._client.v1.refunds.create,
            params=params,
            options=self._options(idempotency_key),
        )
        status = str(refund.get("status") or "pending")
        return ProviderRefund(
            str(refund["id"]), status if status in ("succeeded", "failed") else "pending"
        )

    @staticmethod
    def _found(intent: Any) -> ProviderPayment:
        return ProviderPayment(
            provider_id=str(intent["id"]),
            state=_state(intent),
            provider_status=str(intent.get("status") or ""),
            client_secret=str(intent.get("client_secret") or ""),
        )

    def _parse_event(self, payload: dict[str, Any]) -> WebhookEvent:
        kind = str(payload["type"])
        obj = payload["data"]["object"]
        if not isinstance(obj, dict):
            raise TypeError("data.object is not an object")
        event_id = str(payload.get("id", ""))
        if kind.startswith("payment_intent."):
            return WebhookEvent(event_id, kind, str(obj["id"]), _EVENTS.get(kind), data=payload)
        if kind == "charge.refunded":
            return WebhookEvent(
                event_id,
                kind,
                str(obj.get("payment_intent") or ""),
                amount_refunded=int(obj["amount_refunded"]),
                data=payload,
            )
        if kind.startswith("refund.") or kind.startswith("charge.refund."):
            status = str(obj.get("status") or "")
            amount = obj.get("amount")
            return WebhookEvent(
                event_id,
                kind,
                str(obj.get("payment_intent") or ""),
                refund_id=str(obj["id"]),
                refund_status=status if status in ("succeeded", "failed", "pending") else "",
                refund_amount=int(amount) if amount is not None else None,
                data=payload,
            )
        return WebhookEvent(event_id, kind, data=payload)
