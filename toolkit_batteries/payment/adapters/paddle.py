"""Paddle (adapter ``paddle``, canonical ``payment_b``): transactions and refund adjustments.

Calls go through the official ``paddle-python-sdk`` client (``paddle_billing.Client``):
its session sends ``Authorization: Bearer <api_key>``, ``Paddle-Version: 1``, a JSON
body and a fresh ``X-Transaction-ID`` per request, and its ``ResponseParser`` turns the
``{"error": {"type", "code", "detail", ...}}`` bodies into ``ApiError``. The adapter
uses the client's raw calls (``post_raw``/``get_raw``/``patch_raw``) and reads the
``data`` member itself, rather than the typed resource classes, so a non-catalog
one-line transaction needs no catalog product and a new response field never breaks it.

The base URL is ``endpoint`` when set, else ``https://sandbox-api.paddle.com`` with
``sandbox``, else ``https://api.paddle.com`` (the SDK's environments take no URL, so the
adapter passes an environment object carrying ``endpoint``). The session's transports
are replaced by the guarded one of :mod:`toolkit_batteries.core.outbound` (private
targets need ``allow_private``, http needs ``allow_insecure``, no redirects, no
environment proxies), without retries: the provider takes no idempotency key, so a
retried POST could charge or refund twice. Refunds still run once per key through the
idempotency battery.

Paddle has no separate authorization: ``create(..., capture=False)`` and ``capture``
raise :class:`~..base.PaymentNotSupportedError`. A refund is an adjustment that Paddle
approves later (``pending``; the ``adjustment.updated`` webhook settles it).

Webhooks carry ``Paddle-Signature: ts=<unix>;h1=<hex HMAC-SHA256 of "ts:body">``,
verified against ``webhook_secret`` (the notification destination's secret key).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.core.outbound import OutboundBlockedError, provider
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.core.webhook_signatures import PADDLE

from ..base import (
    NewPayment,
    PaymentProviderError,
    ProviderPayment,
    ProviderRefund,
    WebhookEvent,
)
from ..states import PaymentState
from ._common import SDKPayment, endpoint_of

with MissingExtraError.guard("payment", "payment_b", "payment", "paddle-python-sdk"):
    import requests
    from paddle_billing import Client, Options
    from paddle_billing.Exceptions.ApiError import ApiError
    from paddle_billing.ResponseParser import ResponseParser

__all__ = ["PRODUCTION_ENDPOINT", "SANDBOX_ENDPOINT", "SCHEME", "PaddlePayment"]

PRODUCTION_ENDPOINT = "https://api.paddle.com"
SANDBOX_ENDPOINT = "https://sandbox-api.paddle.com"
#: ``Paddle-Signature: ts=...;h1=...`` over ``f"{ts}:{body}"``.
SCHEME = PADDLE

_STATUS = {
    "draft": PaymentState.PENDING,
    "ready": PaymentState.PENDING,
    "billed": PaymentState.PENDING,
    "paid": PaymentState.SUCCEEDED,
    "completed": PaymentState.SUCCEEDED,
    "past_due": PaymentState.FAILED,
    "canceled": PaymentState.CANCELED,
}

_EVENTS = {
    "transaction.created": PaymentState.PENDING,
    "transaction.ready": PaymentState.PENDING,
    "transaction.billed": PaymentState.PENDING,
    "transaction.paid": PaymentState.SUCCEEDED,
    "transaction.completed": PaymentState.SUCCEEDED,
    "transaction.payment_failed": PaymentState.FAILED,
    "transaction.past_due": PaymentState.FAILED,
    "transaction.canceled": PaymentState.CANCELED,
}

_ADJUSTMENT = {"approved": "succeeded", "rejected": "failed", "reversed": "failed"}


@dataclass(frozen=True)
class _Endpoint:
    """Stands in for the SDK's ``Environment``: the client only reads ``base_url``."""

    base_url: str


@traced("_create", "_retrieve", "_cancel", "_refund")
class PaddlePayment(SDKPayment):
    """A transactions-and-adjustments provider reached through its official SDK."""

    adapter_name = "payment_b"
    signature_scheme = SCHEME
    manual_capture = False

    @classmethod
    def open(cls, ctx: OpenContext) -> PaddlePayment:
        """Check key and endpoint; build the SDK client and guard its transports."""
        options = ctx.options
        key = cls._required(ctx, "api_key")
        ep = endpoint_of(ctx, SANDBOX_ENDPOINT if options.sandbox else PRODUCTION_ENDPOINT)
        client = Client(options.api_key, options=Options(environment=_Endpoint(ep.url)))
        provider.guard_session(client.client, ep)
        return cls(client, key, **cls.common_kwargs(ctx))

    def _call(self, operation: str, method: str, path: str, payload: Any = None) -> dict[str, Any]:
        """Run one raw SDK call and return its ``data`` object (errors become ours)."""
        try:
            if method == "GET":
                response = self._client.get_raw(path)
            elif method == "PATCH":
                response = self._client.patch_raw(path, payload)
            else:
                response = self._client.post_raw(path, payload)
        except ApiError as exc:
            raise self._failed(
                operation,
                exc,
                code=exc.error_code,
                message=exc.detail,
            ) from None
        except (requests.RequestException, OutboundBlockedError) as exc:
            raise self._failed(operation, exc) from None
        except ValueError as exc:  # the SDK broke reading an error (``int("0.05")``)
            if provider.http_error_behind(exc) is None:
                raise
            error = provider.error_body(exc).get("error") or {}
            raise self._failed(
                operation, exc, code=error.get("code", ""), message=error.get("detail", "")
            ) from None
        data = ResponseParser(response).get_dict()
        if not isinstance(data, dict) or "id" not in data:
            raise PaymentProviderError(
                self.instance, operation, status=response.status_code, provider_code="bad_body"
            )
        return data

    def _create(self, new: NewPayment) -> ProviderPayment:
        name = new.description or "Payment"
        amount, currency = new.amount, new.currency
        payload = {
            "items": [
                {
                    "quantity": 1,
                    "price": {
                        "description": name[:200],
                        "name": name[:150],
                        "unit_price": {"amount": str(amount), "currency_code": currency},
                        "product": {"name": name[:150], "tax_category": "standard"},
                    },
                }
            ],
            "currency_code": currency,
            "collection_mode": "automatic",
            "custom_data": {**new.metadata, "toolkit_payment_id": new.payment_id},
        }
        data = self._call("create", "POST", "/transactions", payload)
        items = (data.get("details") or {}).get("line_items") or []
        line_item = str(items[0].get("id", "")) if items else ""
        return ProviderPayment(
            provider_id=str(data["id"]),
            state=_STATUS.get(str(data.get("status")), PaymentState.PENDING),
            provider_status=str(data.get("status") or ""),
            checkout_url=str((data.get("checkout") or {}).get("url") or ""),
            provider_data={"line_item_id": line_item} if line_item else {},
        )

    def _retrieve(self, record: Any) -> ProviderPayment:
        data = self._call("retrieve", "GET", f"/transactions/{record.provider_id}")
        return self._found(data)

    def _cancel(self, record: Any) -> ProviderPayment:
        data = self._call(
            "cancel", "PATCH", f"/transactions/{record.provider_id}", {"status": "canceled"}
        )
        return self._found(data)

    def _refund(
        self, record: Any, amount: int, reason: str, idempotency_key: str
    ) -> ProviderRefund:
        payload: dict[str, Any] = {
            "action": "refund",
            "transaction_id": record.provider_id,
            "reason": reason or "refund requested",
        }
        if amount >= record.amount and record.amount_refunded == 0:
            payload["type"] = "full"
        else:
            item = str((record.provider_data or {}).get("line_item_id") or "")
            if not item:
                raise PaymentProviderError(
                    self.instance, "refund", provider_code="no_line_item_for_partial_refund"
                )
            payload["type"] = "partial"
            payload["items"] = [{"item_id": item, "type": "partial", "amount": str(amount)}]
        data = self._call("refund", "POST", "/adjustments", payload)
        status = _ADJUSTMENT.get(str(data.get("status") or ""), "pending")
        return ProviderRefund(str(data["id"]), status)

    @staticmethod
    def _found(data: dict[str, Any]) -> ProviderPayment:
        status = str(data.get("status") or "")
        return ProviderPayment(str(data["id"]), _STATUS.get(status, PaymentState.PENDING), status)

    def _parse_event(self, payload: dict[str, Any]) -> WebhookEvent:
        kind = str(payload["event_type"])
        data = payload["data"]
        if not isinstance(data, dict):
            raise TypeError("data is not an object")
        event_id = str(payload.get("event_id", ""))
        if kind.startswith("transaction."):
            return WebhookEvent(event_id, kind, str(data["id"]), _EVENTS.get(kind), data=payload)
        if kind.startswith("adjustment.") and data.get("action") == "refund":
            return WebhookEvent(
                event_id,
                kind,
                str(data.get("transaction_id") or ""),
                refund_id=str(data["id"]),
                refund_status=_ADJUSTMENT.get(str(data.get("status") or ""), ""),
                refund_amount=_adjusted_amount(data),
                data=payload,
            )
        return WebhookEvent(event_id, kind, data=payload)


def _adjusted_amount(data: dict[str, Any]) -> int | None:
    """Return a refund adjustment's amount (``totals.total``, else its items'), if given."""
    total = (data.get("totals") or {}).get("total")
    if total is not None:
        return int(total)
    amounts = [item.get("amount") for item in data.get("items") or []]
    if amounts and all(amount is not None for amount in amounts):
        return sum(int(amount) for amount in amounts)
    return None
