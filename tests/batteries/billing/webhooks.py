"""Provider webhooks built and signed here, independently of the adapters' code.

``Stripe-Signature: t=<ts>,v1=<hex HMAC-SHA256(secret, "<ts>.<body>")>`` and
``Paddle-Signature: ts=<ts>;h1=<hex HMAC-SHA256(secret, "<ts>:<body>")>``, from each
provider's published verification recipe, with the standard library's ``hmac``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from datetime import UTC, datetime
from typing import Any

from .conftest import WEBHOOK_SECRETS


def hex_hmac(secret: str, message: str) -> str:
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()


def sign(variant: str, body: bytes, ts: int, secret: str | None = None) -> dict[str, str]:
    """Return the signature header of ``body`` signed at ``ts``."""
    key = secret or WEBHOOK_SECRETS[variant]
    text = body.decode()
    if variant == "billing_a":
        return {"Stripe-Signature": f"t={ts},v1={hex_hmac(key, f'{ts}.{text}')}"}
    return {"Paddle-Signature": f"ts={ts};h1={hex_hmac(key, f'{ts}:{text}')}"}


def subscription_event(
    variant: str,
    sub_id: str,
    customer_id: str,
    status: str,
    created: int,
    *,
    kind: str = "updated",
    transaction_id: str = "",
    event_id: str = "",
) -> bytes:
    """Return the JSON body of a subscription event as the provider sends it."""
    ident = event_id or "evt_" + secrets.token_hex(10)
    if variant == "billing_a":
        payload: dict[str, Any] = {
            "id": ident,
            "object": "event",
            "api_version": "2025-01-27.acacia",
            "type": f"customer.subscription.{kind}",
            "created": created,
            "livemode": False,
            "data": {
                "object": {
                    "id": sub_id,
                    "object": "subscription",
                    "customer": customer_id,
                    "status": status,
                    "cancel_at_period_end": False,
                    "items": {
                        "object": "list",
                        "data": [{"price": {"id": "price_basic"}, "current_period_end": created}],
                    },
                }
            },
        }
    else:
        when = datetime.fromtimestamp(created, UTC).isoformat().replace("+00:00", "Z")
        payload = {
            "event_id": ident,
            "event_type": f"subscription.{kind}",
            "occurred_at": when,
            "notification_id": "ntf_" + secrets.token_hex(10),
            "data": {
                "id": sub_id,
                "status": status,
                "customer_id": customer_id,
                "transaction_id": transaction_id or None,
                "items": [{"price": {"id": "pri_basic"}, "quantity": 1}],
                "current_billing_period": {"ends_at": "2026-12-01T00:00:00Z"},
                "scheduled_change": None,
            },
        }
    return json.dumps(payload).encode()


def other_event(variant: str, created: int) -> bytes:
    """Return an event that is not about a subscription (an invoice / a transaction)."""
    if variant == "billing_a":
        payload = {
            "id": "evt_" + secrets.token_hex(8),
            "type": "invoice.paid",
            "created": created,
            "data": {"object": {"id": "in_1", "object": "invoice"}},
        }
    else:
        payload = {
            "event_id": "evt_" + secrets.token_hex(8),
            "event_type": "transaction.completed",
            "occurred_at": "2026-11-24T10:00:00Z",
            "data": {"id": "txn_1"},
        }
    return json.dumps(payload).encode()
