"""Open the billing battery the real way (configuration, then a ``Container``).

Variants of the contract:

* ``stub``: the default adapter, subscriptions recorded in a migrated SQLite file;
* ``billing_a``: against :class:`~tests.batteries.billing.fakes.FakeStripe`, recorded in
  the session's PostgreSQL database (rows cleared around each test);
* ``billing_b``: against :class:`~tests.batteries.billing.fakes.FakePaddle`, recorded in
  SQLite.

Provider variants set ``allow_insecure`` and ``allow_private`` (the fake is plain http on
127.0.0.1); the SSRF tests leave them off.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.batteries import BatteryOpener, migrated_sqlite
from toolkit_batteries.core.container import Container

from .fakes import PADDLE_KEY, STRIPE_KEY, Fake, FakePaddle, FakeStripe

VARIANTS = ("stub", "billing_a", "billing_b")
STRIPE_WEBHOOK_SECRET = "whsec_billingTestSecret0123456789abcdef"
PADDLE_WEBHOOK_SECRET = "pdl_ntfset_01billing_webhookSecret0123456789"
WEBHOOK_SECRETS = {"billing_a": STRIPE_WEBHOOK_SECRET, "billing_b": PADDLE_WEBHOOK_SECRET}
#: Every credential the tests use: none may appear in logs, reprs or errors.
ALL_SECRETS = (STRIPE_KEY, PADDLE_KEY, STRIPE_WEBHOOK_SECRET, PADDLE_WEBHOOK_SECRET)


@dataclass
class Opened:
    """An opened billing instance, its container and the provider fake (if any)."""

    variant: str
    billing: Any
    container: Container
    fake: Fake | None

    def provider_creates(self) -> int:
        """How many subscription-creating calls reached the provider."""
        if self.variant == "stub":
            return len(self.billing._subscriptions)
        if self.variant == "billing_a":
            return len(self.fake.requests_to("POST", "/v1/subscriptions"))
        return len(self.fake.requests_to("POST", "/transactions"))

    def live_subscription(self) -> Any:
        """Return an ``active`` subscription the provider knows, recorded."""
        customer = self.billing.create_customer("ada@example.com", name="Ada")
        if self.variant == "billing_b":
            ident = "sub_01" + uuid.uuid4().hex[:24]
            self.fake.subscription(ident, customer.id, "active")
            return self.billing.sync_subscription(ident)
        return self.billing.create_subscription(customer.id, "price_basic")


def _clear_rows(dsn: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM toolkit_billing_subscription")


@pytest.fixture
def make_billing(
    request, tmp_path: Path, open_battery: BatteryOpener
) -> Iterator[Callable[..., Opened]]:
    """Return ``make(variant, **options)``: open a billing instance (and its fake).

    The fakes stop and the rows are cleared first; ``open_battery`` closes the containers.
    """
    cleanups: list[Callable[[], None]] = []

    def make(variant: str, *, auto_approve: bool = True, **options: Any) -> Opened:
        fake: Fake | None = None
        if variant == "stub":
            options.setdefault("auto_approve", auto_approve)
        else:
            fake = (FakeStripe() if variant == "billing_a" else FakePaddle()).start()
            cleanups.append(fake.stop)
            options.setdefault("endpoint", fake.url)
            options.setdefault("allow_insecure", True)
            options.setdefault("allow_private", True)
            options.setdefault("webhook_secret", WEBHOOK_SECRETS[variant])
            options.setdefault("secret_key" if variant == "billing_a" else "api_key", fake.key)
        if variant == "billing_a":
            dsn = request.getfixturevalue("postgres_dsn")
            _clear_rows(dsn)
            cleanups.append(lambda: _clear_rows(dsn))
            db = {"adapter": "sqlserver", "options": {"dsn": dsn}}
        else:
            path = migrated_sqlite(request, tmp_path, "billing")
            db = {"adapter": "sqlfile", "options": {"dsn": path}}
        settings = {"db": db, "billing": {"adapter": variant, "options": options}}
        container = open_battery.container(settings)
        return Opened(variant, container.billing(), container, fake)

    yield make
    for cleanup in reversed(cleanups):
        cleanup()


@pytest.fixture(params=VARIANTS)
def opened(request, make_billing) -> Opened:
    """One opened billing instance per adapter."""
    return make_billing(request.param)
