"""Billing benchmarks: the provider adapters against their raw SDKs, in the same run.

Both sides call the same local provider fake (``tests.batteries.billing.fakes``, a
threaded ``http.server`` on 127.0.0.1 speaking the provider's wire format):

* ``billing_a`` ``get_subscription`` (argument check, the guarded ``requests`` transport
  that checks every resolved address, ``to_dict`` and mapping to a ``Subscription``)
  against ``stripe.StripeClient(...).v1.subscriptions.retrieve`` on a plain
  ``requests.Session`` (``trust_env`` off like the adapter's: with it on, requests looks
  up environment proxies on every call and the raw side is slower);
* ``billing_b`` ``get_subscription`` against ``paddle_billing.Client.get_raw`` (the SDK's
  typed ``subscriptions.get`` needs every field of a subscription object) with
  ``trust_env`` off likewise;
* ``billing_a`` ``create_customer`` with an ``idempotency_key`` (a fresh key each call:
  the reserve and commit in the memory idempotency store are the added work) against the
  raw SDK's ``customers.create`` with the same ``idempotency_key``.

Runs of the two sides alternate and the best of several repeats is kept. Target: at
least 0.9x the raw rate.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

from bench._measure import best_interleaved
from bench.foundation import Result

TARGET = 0.9


def _migrated_sqlite() -> str:
    from django.core.management import call_command
    from django.db import connections

    from toolkit_batteries.core.slots import slot_alias
    from toolkit_batteries.db.databases import sqlite_entry

    path = str(Path(tempfile.mkdtemp(prefix="toolkit-bench-billing-")) / "rows.sqlite3")
    alias = slot_alias(connections, sqlite_entry(path), preferred="default", prefix="toolkit_db")
    call_command("migrate", "toolkit_billing", database=alias, verbosity=0, interactive=False)
    return path


def _open(adapter: str, fake: Any) -> Any:
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    key = "secret_key" if adapter == "billing_a" else "api_key"
    settings = {
        "db": {"adapter": "sqlfile", "options": {"dsn": _migrated_sqlite()}},
        "billing": {
            "adapter": adapter,
            "options": {
                key: fake.key,
                "endpoint": fake.url,
                "allow_insecure": True,
                "allow_private": True,
            },
        },
    }
    return Container(Config.load(settings, {}))


def _raw_stripe(fake: Any) -> Any:
    import requests
    import stripe

    session = requests.Session()
    session.trust_env = False
    return stripe.StripeClient(
        fake.key,
        base_addresses={"api": fake.url},
        http_client=stripe.RequestsClient(session=session, timeout=30),
        max_network_retries=0,
    )


def _result(name: str, mine: float, theirs: float) -> Result:
    return Result(name, mine, theirs, "calls/s", f">= {TARGET}x", mine >= TARGET * theirs)


def bench_billing_a_get() -> Result:
    """Time billing_a ``get_subscription`` against the raw SDK's ``retrieve``."""
    from tests.batteries.billing.fakes import FakeStripe

    fake = FakeStripe().start()
    container = _open("billing_a", fake)
    try:
        billing = container.billing()
        customer = billing.create_customer("bench@example.com")
        sub = billing.create_subscription(customer.id, "price_bench")
        raw = _raw_stripe(fake).v1.subscriptions

        def ours(n: int) -> None:
            get = billing.get_subscription
            for _ in range(n):
                get(sub.id)

        def base(n: int) -> None:
            for _ in range(n):
                raw.retrieve(sub.id)

        ours(20), base(20)
        mine, theirs = best_interleaved(ours, base, 150, repeats=5)
    finally:
        container.close()
        fake.stop()
    return _result("billing_a get_subscription vs raw stripe SDK", mine, theirs)


def bench_billing_b_get() -> Result:
    """Time billing_b ``get_subscription`` against the raw SDK's ``get_raw``."""
    from paddle_billing import Client, Options

    from tests.batteries.billing.fakes import FakePaddle

    fake = FakePaddle().start()
    fake.subscription("sub_01bench", "ctm_01bench")
    container = _open("billing_b", fake)

    class Origin:
        base_url = fake.url

    try:
        billing = container.billing()
        raw = Client(fake.key, options=Options(environment=Origin()), retry_count=0, timeout=30)
        raw.client.trust_env = False

        def ours(n: int) -> None:
            get = billing.get_subscription
            for _ in range(n):
                get("sub_01bench")

        def base(n: int) -> None:
            for _ in range(n):
                raw.get_raw("/subscriptions/sub_01bench").json()

        ours(20), base(20)
        mine, theirs = best_interleaved(ours, base, 150, repeats=5)
    finally:
        container.close()
        fake.stop()
    return _result("billing_b get_subscription vs raw paddle SDK", mine, theirs)


def bench_billing_a_idempotent_create() -> Result:
    """Time an idempotent ``create_customer`` against the raw SDK with the same key."""
    from tests.batteries.billing.fakes import FakeStripe

    fake = FakeStripe().start()
    container = _open("billing_a", fake)
    counter = itertools.count()
    try:
        billing = container.billing()
        raw = _raw_stripe(fake).v1.customers

        def ours(n: int) -> None:
            create = billing.create_customer
            for _ in range(n):
                create("bench@example.com", idempotency_key=f"ours-{next(counter)}")

        def base(n: int) -> None:
            for _ in range(n):
                raw.create(
                    params={"email": "bench@example.com"},
                    options={"idempotency_key": f"raw-{next(counter)}"},
                )

        ours(20), base(20)
        mine, theirs = best_interleaved(ours, base, 150, repeats=5)
    finally:
        container.close()
        fake.stop()
    return _result("billing_a idempotent create_customer vs raw stripe SDK", mine, theirs)


BENCHMARKS = (bench_billing_a_get, bench_billing_b_get, bench_billing_a_idempotent_create)
