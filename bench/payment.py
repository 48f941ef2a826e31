"""Payment benchmarks: each provider adapter against its raw SDK, on the same local server.

* ``payment_a`` create: the public ``services.payment().create(...)`` (checks, guarded
  transport, error and status mapping, the payment row written to SQLite; traced) against
  ``stripe.StripeClient.v1.payment_intents.create`` on a plain SDK client followed by
  the equivalent row written by hand (one ``INSERT`` into the same table of the same
  file through ``sqlite3``, committed), both to the test suite's PaymentIntents server
  on 127.0.0.1. Target: at least 0.9x the raw rate.
* ``payment_b`` create: the same against ``paddle_billing.Client.post_raw`` of the same
  transaction body plus the same hand-written row. Target: at least 0.9x.
* webhook verification (``Stripe-Signature``) against
  ``stripe.WebhookSignature.verify_header`` on the same 2 KiB body. Target: at least 0.9x.

Runs of the two sides are interleaved and the best of several repeats is kept.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from bench._measure import best_interleaved
from bench.foundation import Result

KEY_A = "sk_test_benchKeyA"
KEY_B = "pdl_sdbx_apikey_benchKeyB"
SECRET = "whsec_benchSecret"


def _migrated_sqlite() -> str:
    from django.core.management import call_command
    from django.db import connections

    from toolkit_batteries.core.slots import slot_alias
    from toolkit_batteries.db.databases import sqlite_entry

    path = str(Path(tempfile.mkdtemp(prefix="toolkit-bench-payment-")) / "rows.sqlite3")
    alias = slot_alias(connections, sqlite_entry(path), preferred="default", prefix="toolkit_db")
    call_command("migrate", database=alias, verbosity=0, interactive=False)
    return path


def _open(adapter: str, server: Any, path: str) -> Any:
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    key = {"secret_key": KEY_A} if adapter == "payment_a" else {"api_key": KEY_B}
    settings = {
        "db": {"adapter": "sqlfile", "options": {"dsn": path}},
        "payment": {
            "adapter": adapter,
            "options": {
                **key,
                "webhook_secret": SECRET,
                "endpoint": server.url,
                "allow_insecure": True,
                "allow_private": True,
            },
        },
    }
    return Container(Config.load(settings, {}))


def _stripe_http(stripe: Any) -> Any:
    """Return the SDK's requests client on a plain session without environment lookups.

    The adapter's guarded session does not read proxies or ``.netrc`` per request; a
    default session does, which would flatter the adapter.
    """
    import requests

    session = requests.Session()
    session.trust_env = False
    return stripe.RequestsClient(session=session)


def _raw_row(path: str) -> Any:
    """Return ``write(provider_id, state, provider_data)``: the payment row, by hand.

    The same table and file as the adapter's rows, one ``INSERT`` committed per payment
    (what the adapter's autocommit write costs); ``adapter`` is ``raw`` so the unique
    provider id never meets the adapter's rows.
    """
    import datetime
    import json
    import sqlite3
    import uuid

    conn = sqlite3.connect(path, isolation_level=None)
    sql = (
        "INSERT INTO toolkit_payment_payment (id, instance, adapter, provider_id, amount, "
        "currency, amount_refunded, state, provider_status, reference, description, "
        "metadata, provider_data, created_at, updated_at) "
        "VALUES (?, 'default', 'raw', ?, 1000, 'USD', 0, ?, ?, '', 'Bench', ?, ?, ?, ?)"
    )
    metadata = json.dumps({})

    def write(provider_id: str, state: str, provider_data: dict[str, Any]) -> None:
        now = datetime.datetime.now(datetime.UTC).isoformat()
        row = (uuid.uuid4().hex, provider_id, state, state, metadata)
        conn.execute(sql, (*row, json.dumps(provider_data), now, now))

    write.close = conn.close  # type: ignore[attr-defined]
    return write


def _public(payment: Any) -> Any:
    def ours(n: int) -> None:
        create = payment.create
        for _ in range(n):
            create(1000, "USD", description="Bench")

    return ours


def bench_payment_a_call() -> Result:
    """Time the public payment_a create (row included) against the raw SDK and a raw row."""
    import stripe

    from tests.batteries.payment.servers import ProviderA

    server = ProviderA(KEY_A).start()
    path = _migrated_sqlite()
    container = _open("payment_a", server, path)
    raw = stripe.StripeClient(
        KEY_A, base_addresses={"api": server.url}, http_client=_stripe_http(stripe)
    )
    write = _raw_row(path)
    params = {
        "amount": 1000,
        "currency": "usd",
        "capture_method": "automatic",
        "metadata": {"toolkit_payment_id": "p"},
        "description": "Bench",
    }

    def base(n: int) -> None:
        create = raw.v1.payment_intents.create
        for _ in range(n):
            intent = create(params=params).to_dict()
            write(intent["id"], intent["status"], {})

    try:
        ours = _public(container.payment())
        ours(20), base(20)
        mine, theirs = best_interleaved(ours, base, 150, repeats=5)
    finally:
        write.close()
        container.close()
        server.stop()
    return Result(
        "payment_a create (row) vs raw stripe SDK + row",
        mine,
        theirs,
        "ops/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
    )


def bench_payment_b_call() -> Result:
    """Time the public payment_b create (row included) against the raw SDK and a raw row."""
    from paddle_billing import Client, Options

    from tests.batteries.payment.servers import ProviderB
    from toolkit_batteries.payment.adapters.paddle import _Endpoint

    server = ProviderB(KEY_B).start()
    path = _migrated_sqlite()
    container = _open("payment_b", server, path)
    raw = Client(KEY_B, options=Options(environment=_Endpoint(server.url)))
    raw.client.trust_env = False  # as the adapter's session: no proxy/netrc lookups
    write = _raw_row(path)
    name = "Bench"
    body = {
        "items": [
            {
                "quantity": 1,
                "price": {
                    "description": name,
                    "name": name,
                    "unit_price": {"amount": "1000", "currency_code": "USD"},
                    "product": {"name": name, "tax_category": "standard"},
                },
            }
        ],
        "currency_code": "USD",
        "collection_mode": "automatic",
        "custom_data": {"toolkit_payment_id": "p"},
    }

    def base(n: int) -> None:
        post = raw.post_raw
        for _ in range(n):
            data = post("/transactions", body).json()["data"]
            write(data["id"], data["status"], {})

    try:
        ours = _public(container.payment())
        ours(20), base(20)
        mine, theirs = best_interleaved(ours, base, 150, repeats=5)
    finally:
        write.close()
        container.close()
        server.stop()
    return Result(
        "payment_b create (row) vs raw paddle SDK + row",
        mine,
        theirs,
        "ops/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
    )


def bench_webhook_verify() -> Result:
    """Time the battery's Stripe-Signature check against the SDK's verify_header."""
    import stripe

    from toolkit_batteries.core.webhook_signatures import sign, verify
    from toolkit_batteries.payment.adapters.stripe import SCHEME
    from toolkit_batteries.payment.signatures import WebhookSignatureError

    body = b'{"id": "evt_1", "type": "payment_intent.succeeded", "pad": "' + b"x" * 2000 + b'"}'
    header = sign(SCHEME, SECRET, int(time.time()), body)
    text = body.decode()

    def refused(reason: str) -> Exception:
        return WebhookSignatureError("default", reason)

    def ours(n: int) -> None:
        for _ in range(n):
            verify(SCHEME, header, body, SECRET, tolerance=300, fail=refused)

    def base(n: int) -> None:
        check = stripe.WebhookSignature.verify_header
        for _ in range(n):
            check(text, header, SECRET, 300)

    ours(1000), base(1000)
    mine, theirs = best_interleaved(ours, base, 20_000, repeats=5)
    return Result(
        "webhook verify vs stripe.WebhookSignature",
        mine,
        theirs,
        "ops/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
        number=",.0f",
    )


BENCHMARKS = (bench_payment_a_call, bench_payment_b_call, bench_webhook_verify)
