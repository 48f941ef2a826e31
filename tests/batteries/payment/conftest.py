"""Open the payment battery the real way (configuration, then a Container) on every adapter.

``stub`` needs nothing but its tables; ``payment_a`` and ``payment_b`` talk to the local
provider servers of :mod:`.servers` on 127.0.0.1, with ``allow_private`` and
``allow_insecure`` set for the test only. Rows live in a migrated SQLite file copied for
each test. Webhook signatures are computed here, independently of the battery's code.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.batteries import migrated_sqlite
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .servers import Provider, ProviderA, ProviderB

#: Adapters on SQLite, plus one on the real PostgreSQL server (row locks are real there).
VARIANTS = ("stub", "payment_a", "payment_b", "payment_a-postgres", "payment_b-postgres")
KEYS = {
    "payment_a": "sk_test_51LocalKeyA9f3c2e7d1b0a",
    "payment_b": "pdl_sdbx_apikey_01local9c8b7a6f5e",
}
WEBHOOK_SECRETS = {
    "payment_a": "whsec_localSecretA4d2f9e1c7b",
    "payment_b": "pdl_ntfset_localSecretB8e3a1",
}
#: Every secret a test hands the battery: none may appear in logs or output.
ALL_SECRETS = (*KEYS.values(), *WEBHOOK_SECRETS.values())


def sign_a(secret: str, body: bytes, timestamp: int) -> str:
    """``Stripe-Signature``: ``t=<ts>,v1=<hex HMAC-SHA256(secret, "<ts>." + body)>``."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def sign_b(secret: str, body: bytes, timestamp: int) -> str:
    """``Paddle-Signature``: ``ts=<ts>;h1=<hex HMAC-SHA256(secret, "<ts>:" + body)>``."""
    mac = hmac.new(secret.encode(), f"{timestamp}:".encode() + body, hashlib.sha256)
    return f"ts={timestamp};h1={mac.hexdigest()}"


@dataclass
class Opened:
    """An opened payment instance, its container and its provider server (if any)."""

    variant: str
    payment: Any
    container: Container
    server: Provider | None

    # ------------------------------------------------------------------ webhooks

    def event(self, record: Any, outcome: str) -> dict[str, Any]:
        """Return the provider's event saying ``record`` reached ``outcome``.

        Outcomes: ``succeeded``, ``authorized``, ``failed``, ``canceled``. The provider
        server's object is moved to match, as the provider would have.
        """
        if self.variant == "stub":
            return {
                "id": f"evt_{uuid.uuid4().hex}",
                "type": f"payment.{outcome}",
                "payment_id": record.provider_id,
            }
        if self.variant == "payment_a":
            intent = self.server.intents[record.provider_id]
            status, kind = {
                "succeeded": ("succeeded", "payment_intent.succeeded"),
                "authorized": ("requires_capture", "payment_intent.amount_capturable_updated"),
                "failed": ("requires_payment_method", "payment_intent.payment_failed"),
                "canceled": ("canceled", "payment_intent.canceled"),
            }[outcome]
            intent["status"] = status
            return {
                "id": f"evt_{secrets.token_hex(8)}",
                "object": "event",
                "type": kind,
                "api_version": "2024-06-20",
                "data": {"object": dict(intent)},
            }
        txn = self.server.transactions[record.provider_id]
        status, kind = {
            "succeeded": ("completed", "transaction.completed"),
            "failed": ("past_due", "transaction.payment_failed"),
            "canceled": ("canceled", "transaction.canceled"),
        }[outcome]
        txn["status"] = status
        return {
            "event_id": f"evt_{secrets.token_hex(8)}",
            "event_type": kind,
            "occurred_at": "2026-11-24T21:00:00.000000Z",
            "notification_id": f"ntf_{secrets.token_hex(8)}",
            "data": dict(txn),
        }

    def signed(
        self, payload: Any, *, timestamp: int | None = None, secret: str | None = None
    ) -> tuple[bytes, dict[str, str]]:
        """Return ``(body, headers)`` of a delivery of ``payload``, signed as the provider."""
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        stamp = int(time.time()) if timestamp is None else timestamp
        if self.variant == "payment_a":
            key = secret or WEBHOOK_SECRETS["payment_a"]
            return body, {"Stripe-Signature": sign_a(key, body, stamp)}
        if self.variant == "payment_b":
            key = secret or WEBHOOK_SECRETS["payment_b"]
            return body, {"Paddle-Signature": sign_b(key, body, stamp)}
        return body, {}

    def deliver(self, record: Any, outcome: str) -> Any:
        """Deliver the signed event of ``outcome`` to the battery; return the refreshed row."""
        body, headers = self.signed(self.event(record, outcome))
        self.payment.handle_webhook(body, headers)
        return self.payment.get(record.id)

    def pay(self, record: Any) -> Any:
        """Have the customer pay ``record`` (the provider then says so by webhook)."""
        return self.deliver(record, "succeeded")

    def provider_calls(self, method: str, path: str) -> int:
        return 0 if self.server is None else len(self.server.requests(method, path))


def options_for(variant: str, server: Provider | None, **extra: Any) -> dict[str, Any]:
    """Return the payment options of ``variant`` against ``server``."""
    options: dict[str, Any] = {}
    if variant == "payment_a":
        options = {"secret_key": KEYS["payment_a"], "webhook_secret": WEBHOOK_SECRETS["payment_a"]}
    elif variant == "payment_b":
        options = {"api_key": KEYS["payment_b"], "webhook_secret": WEBHOOK_SECRETS["payment_b"]}
    if server is not None:
        options.update(endpoint=server.url, allow_insecure=True, allow_private=True)
    options.update(extra)
    return options


@pytest.fixture
def make_payment(request, tmp_path: Path) -> Iterator[Callable[..., Opened]]:
    """Return ``make(variant, **options)``: start the provider, open the battery."""
    opened: list[Opened] = []
    servers: list[Provider] = []
    cleanups: list[Callable[[], None]] = []

    def database(kind: str) -> dict[str, Any]:
        if kind == "postgres":
            dsn = request.getfixturevalue("postgres_dsn")
            clear_rows(dsn)
            cleanups.append(lambda: clear_rows(dsn))
            return {"adapter": "sqlserver", "options": {"dsn": dsn}}
        path = migrated_sqlite(request, tmp_path, "pay")
        return {"adapter": "sqlfile", "options": {"dsn": path}}

    def make(
        variant: str,
        *,
        server: Provider | None = None,
        others: dict[str, dict[str, Any]] | None = None,
        **extra: Any,
    ) -> Opened:
        """Open ``variant``; ``others`` adds instances (name: options) on the same rows."""
        variant, _, kind = variant.partition("-")
        if server is None and variant != "stub":
            server = (ProviderA if variant == "payment_a" else ProviderB)(KEYS[variant]).start()
            servers.append(server)
        payment: dict[str, Any] = {
            "adapter": variant,
            "options": options_for(variant, server, **extra),
        }
        if others:
            payment = {"default": payment}
            for name, options in others.items():
                payment[name] = {
                    "adapter": variant,
                    "options": options_for(variant, server, **options),
                }
        settings = {"db": database(kind), "payment": payment}
        container = Container(Config.load(settings, {}))
        found = Opened(variant, container.payment(), container, server)
        opened.append(found)
        return found

    yield make
    for found in opened:
        found.container.close()
    for server in servers:
        server.stop()
    for cleanup in cleanups:
        cleanup()


def clear_rows(dsn: str) -> None:
    """Delete the payment rows of the PostgreSQL database ``dsn``."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM toolkit_payment_refund")
        conn.execute("DELETE FROM toolkit_payment_payment")


@pytest.fixture(params=VARIANTS)
def opened(request, make_payment) -> Opened:
    """Open the payment battery on each adapter in turn."""
    return make_payment(request.param)
