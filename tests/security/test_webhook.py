"""Webhook battery hardening (issue 23: items 7, 10, 13, 14), on the real stack.

Receivers are real sockets on 127.0.0.1 (a raw socket server for the slow ones, the
suite's ``http.server`` receiver otherwise); rows live in migrated SQLite files; the
``queue`` adapter runs on a real queue with the real crypto service. Signatures are
checked with ``standardwebhooks``, an implementation none of us wrote.
"""

from __future__ import annotations

import base64
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.batteries.webhook import conftest as webhook_fixtures
from tests.ports import free_port
from toolkit_batteries.webhook import SignatureError, verify
from toolkit_batteries.webhook.models import WebhookDelivery

#: The webhook suite's fixtures, shared with this module.
make_hook = webhook_fixtures.make_hook
receiver = webhook_fixtures.receiver
SECRET = webhook_fixtures.SECRET
TOKEN = "RECEIVER-TOKEN-123"


# ------------------------------------------------------------------ item 7: slow receivers


@contextmanager
def trickling_server(head: bytes, body: bytes, pace: float = 0.5) -> Iterator[dict]:
    """Serve one connection at a time: read the request, send ``head`` then ``body``.

    ``head`` is sent one byte per ``pace`` seconds when ``body`` is empty, else at once;
    ``body`` always one byte per ``pace``. Sending stops when the client hangs up, or
    after 30 s; ``seen["hung_up"]`` is the monotonic time the client closed.
    """
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    port = free_port()
    listener.bind(("127.0.0.1", port))
    listener.listen(8)
    listener.settimeout(0.2)
    seen: dict = {"url": f"http://127.0.0.1:{port}/hook?token={TOKEN}", "requests": 0}
    stop = threading.Event()

    def trickle(conn: socket.socket, data: bytes) -> bool:
        for byte in data:
            if stop.is_set():
                return False
            try:
                conn.sendall(bytes([byte]))
            except OSError:
                return False
            time.sleep(pace)
        return True

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                request = b""
                while b"\r\n\r\n" not in request:
                    request += conn.recv(65536)
                seen["requests"] += 1
                give_up = time.monotonic() + 30
                if body:
                    conn.sendall(head)
                    while time.monotonic() < give_up and trickle(conn, body[:1]):
                        pass
                else:
                    trickle(conn, head)
                seen["hung_up"] = time.monotonic()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join(10)
        listener.close()


def test_a_receiver_trickling_its_status_line_is_cut_at_the_attempts_timeout(make_hook):
    opened = make_hook("http-sqlite", timeout="2s")
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"  # 38 bytes: 19 s at 0.5 s each
    with trickling_server(head, b"") as server:
        started = time.monotonic()
        delivery = opened.hook.send(server["url"], {"n": 1}, event="e", secret=SECRET)
        took = time.monotonic() - started
    assert took < 3.5, f"one attempt held the thread {took:.1f}s with timeout=2s"
    assert (delivery.status, delivery.attempts) == ("failed", 1)
    assert "Timeout" in delivery.error


@pytest.mark.parametrize("variant", ["http-sqlite", "queue-memory"])
def test_a_slow_200_is_recorded_as_delivered_within_the_timeout(make_hook, variant):
    opened = make_hook(variant, timeout="2s", max_retries=2)
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"
    with trickling_server(head, b"x") as server:
        started = time.monotonic()
        delivery = opened.hook.send(server["url"], {"n": 1}, event="e", secret=SECRET)
        settled = opened.settle(delivery.id)
        took = time.monotonic() - started
        assert server["requests"] == 1, "a delivered attempt was retried"
    assert (settled.status, settled.attempts, settled.response_status) == ("succeeded", 1, 200)
    assert took < 4.0, f"the slow body held the attempt {took:.1f}s"


# ------------------------------------------------------------------ item 10: query tokens


@pytest.mark.parametrize("variant", ["http-sqlite", "queue-memory"])
def test_a_targets_query_token_is_in_no_log_no_row_and_no_repr(
    make_hook, receiver, variant, caplog
):
    opened = make_hook(variant, max_retries=1)
    opened.hook.configure(sleep=lambda _: None)
    receiver.script = [503]  # a failed attempt logs too
    target = receiver.url(f"/orders?token={TOKEN}&v=2")
    with caplog.at_level(logging.DEBUG):
        delivery = opened.hook.send(target, {"id": 1}, event="order.paid", secret=SECRET)
        settled = opened.settle(delivery.id)
    assert settled.ok
    got = receiver.wait_for(2)
    assert got[-1].path == f"/orders?token={TOKEN}&v=2"  # the receiver gets its token
    assert "HTTP Request: POST" in caplog.text  # httpx did log the request...
    assert TOKEN not in caplog.text  # ...without the query
    row = WebhookDelivery.objects.using(opened.hook.database.alias).get(delivery_id=delivery.id)
    assert TOKEN not in row.target and row.target.endswith("/orders?[redacted]")
    assert TOKEN not in settled.target and TOKEN not in repr(settled)


def test_requests_based_adapters_log_no_query_either(receiver, caplog):
    from toolkit_batteries.core.outbound.requests_adapter import guarded_session

    session = guarded_session(allow_insecure=True, allow_private=True)
    with caplog.at_level(logging.DEBUG):
        answer = session.post(receiver.url(f"/p?token={TOKEN}"), data=b"{}", timeout=5)
    assert answer.status_code == 200
    assert "POST /p?[redacted]" in caplog.text and TOKEN not in caplog.text


# ------------------------------------------------------------------ item 13: signatures


def _standard_secret(secret: str) -> str:
    """Return the Standard Webhooks spelling of a text secret (``whsec_`` + base64 of its bytes)."""
    return "whsec_" + base64.b64encode(secret.encode()).decode()


def test_deliveries_verify_with_the_standard_webhooks_library(make_hook, receiver):
    from standardwebhooks.webhooks import Webhook, WebhookVerificationError

    opened = make_hook("http-sqlite")
    delivery = opened.hook.send(receiver.url(), {"id": 7}, event="order.paid", secret=SECRET)
    assert delivery.ok
    (got,) = receiver.wait_for(1)
    standard = Webhook(_standard_secret(SECRET))
    assert standard.verify(got.body, got.headers) == {"id": 7}
    # A secret in the standard's own whsec_<base64> form works the same on both sides.
    key = _standard_secret("k" * 24)
    opened.hook.send(receiver.url(), {"id": 8}, event="e", secret=key)
    got = receiver.wait_for(2)[1]
    assert Webhook(key).verify(got.body, got.headers) == {"id": 8}
    assert verify(got.headers, got.body, key)
    # The standard refuses a rewritten id, as ours does.
    with pytest.raises(WebhookVerificationError):
        standard.verify(got.body, {**got.headers, "Webhook-Id": "other"})


@pytest.mark.parametrize(
    ("header", "value"),
    [("Webhook-Event", "refund.issued"), ("Webhook-Id", "a-fresh-id"), ("Webhook-Event", "")],
)
def test_a_captured_delivery_with_its_id_or_event_rewritten_fails_verification(
    make_hook, receiver, header, value
):
    opened = make_hook("http-sqlite")
    opened.hook.send(receiver.url(), {"id": 1}, event="order.paid", secret=SECRET)
    (got,) = receiver.wait_for(1)
    assert verify(got.headers, got.body, SECRET)
    with pytest.raises(SignatureError):
        verify({**got.headers, header: value}, got.body, SECRET)
    stripped = {k: v for k, v in got.headers.items() if k != "Webhook-Event"}
    with pytest.raises(SignatureError):  # dropping the event header does not help
        verify(stripped, got.body, SECRET)


def test_the_event_cannot_be_shifted_into_the_body(make_hook, receiver):
    opened = make_hook("http-sqlite")
    opened.hook.send(receiver.url(), b"paid.{}", event="order", secret=SECRET)
    (got,) = receiver.wait_for(1)
    shifted = {**got.headers, "Webhook-Event": "order.paid"}
    with pytest.raises(SignatureError):
        verify(shifted, b"{}", SECRET)


def test_the_previous_layout_verifies_only_when_asked():
    import hashlib
    import hmac

    stamp = int(time.time())
    body = b'{"id":1}'
    digest = hmac.new(SECRET.encode(), f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
    headers = {"Webhook-Timestamp": str(stamp), "Webhook-Signature": f"v1={digest}"}
    with pytest.raises(SignatureError):
        verify(headers, body, SECRET)
    assert verify(headers, body, SECRET, legacy=True) == stamp


# ------------------------------------------------------------------ item 14: queue seals


@pytest.mark.parametrize(
    "rewrite",
    [
        {"target": "http://127.0.0.1:{port}/attacker"},
        {"event": "account.deleted"},
        {"body": base64.b64encode(b'{"id":"forged"}').decode()},
        {"content_type": "text/html"},
    ],
)
def test_a_rewritten_queue_message_is_refused_not_signed(make_hook, receiver, rewrite):
    opened = make_hook("queue-memory", worker=False)
    hook = opened.hook
    delivery = hook.send(receiver.url("/orders"), {"id": 1}, event="order.paid", secret=SECRET)
    message = hook.queue.pop(hook.topic, timeout=2)
    assert message is not None
    call = json.loads(message.body)
    changes = {k: v.format(port=receiver.port) for k, v in rewrite.items()}
    call["kwargs"].update(changes)
    hook.queue.ack(message)
    hook.queue.push(hook.topic, json.dumps(call).encode())

    worker = hook.worker(concurrency=1)
    worker.start()
    try:
        settled = opened.settle(delivery.id)
    finally:
        worker.stop()
        worker.join(10)
    assert settled.status == "failed" and "altered" in settled.error
    assert receiver.requests == [], "a rewritten job was signed and sent"


def test_an_untouched_queue_message_is_delivered(make_hook, receiver):
    opened = make_hook("queue-memory")
    delivery = opened.hook.send(receiver.url("/orders"), {"id": 1}, event="e", secret=SECRET)
    assert opened.settle(delivery.id).ok
    (got,) = receiver.wait_for(1)
    assert verify(got.headers, got.body, SECRET)


def test_rows_stored_before_the_fix_have_their_query_redacted_by_the_migration(
    tmp_path, django_db_blocker
):
    from datetime import UTC, datetime

    from django.core.management import call_command
    from django.db import connections

    from tests.support.aliases import aliases_forgotten
    from toolkit_batteries.core.slots import slot_alias
    from toolkit_batteries.db.databases import sqlite_entry

    now = datetime.now(UTC)
    with django_db_blocker.unblock(), aliases_forgotten():
        alias = slot_alias(
            connections, sqlite_entry(str(tmp_path / "old.sqlite3")), preferred="x", prefix="wh_mig"
        )
        call_command("migrate", "toolkit_webhook", "0001", database=alias, verbosity=0)
        WebhookDelivery.objects.using(alias).create(
            delivery_id="old-1",
            instance="default",
            adapter="http",
            target=f"https://hooks.example.com/orders?token={TOKEN}",
            event="e",
            status="succeeded",
            created_at=now,
            updated_at=now,
        )
        call_command("migrate", "toolkit_webhook", database=alias, verbosity=0)
        row = WebhookDelivery.objects.using(alias).get(delivery_id="old-1")
        connections[alias].close()
    assert row.target == "https://hooks.example.com/orders?[redacted]"
