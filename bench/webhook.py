"""Webhook benchmarks: deliveries per second to a local receiver, against raw httpx.

* **http**: ``services.webhook().send(url, body, event=..., secret=...)`` on the ``http``
  adapter (guarded transport, signature, the delivery row in a migrated SQLite file)
  against a plain ``httpx.Client`` posting the same body with the same headers: a fresh
  ``Webhook-Id`` and both signatures (``v1`` and ``v1e``, computed per request with
  ``hmac``), recording nothing.
* **queue**: the ``queue`` adapter on a memory queue with a 4-thread worker, end to end
  (``send`` until every row reads ``succeeded``), against the same raw loop.

The receiver is a threaded ``http.server`` on 127.0.0.1 in a child process (keep-alive,
answers 204). Both sides run one sender thread, interleaved, best of five rounds.
Target: the ``http``
adapter at least 0.8x raw httpx (issue 27's goal). The delivery log's rows of delivered
first attempts are written in batches (``toolkit_batteries.webhook.log_buffer``: 32 rows
or 0.5 s, one multi-row ``INSERT`` built without the ORM), so a send costs 0.03 commits
instead of one. Beyond the raw loop a send checks the target (remembered once allowed),
builds its log row and, only when the first attempt fails, enters the retry policy.
The ``queue`` line is a figure with "no target": queued delivery through a worker is not
the work the raw loop does, so it never prints "ok".
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._curves import Line
from bench._measure import best_interleaved
from bench.foundation import Result

#: A Standard Webhooks secret: ``whsec_`` and the key's base64.
SECRET = "whsec_" + base64.b64encode(b"bench-webhook-secret-key").decode()
BODY = b'{"id":42,"event":"order.paid","total":"19.90","currency":"EUR"}'


_RECEIVER = """
import http.server, sys

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
server.daemon_threads = True
server.serve_forever()
"""


def _receiver() -> tuple[str, Any]:
    """Start the receiver in a process of its own (it must not share this one's GIL)."""
    import socket
    import subprocess
    import sys

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-c", _RECEIVER, str(port)])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.02)
    return f"http://127.0.0.1:{port}/hook", process


def _migrated_sqlite() -> str:
    from django.core.management import call_command
    from django.db import connections

    from toolkit_batteries.core.slots import slot_alias
    from toolkit_batteries.db.databases import sqlite_entry

    path = str(Path(tempfile.mkdtemp(prefix="toolkit-bench-webhook-")) / "rows.sqlite3")
    alias = slot_alias(connections, sqlite_entry(path), preferred="default", prefix="toolkit_db")
    call_command("migrate", "toolkit_webhook", database=alias, verbosity=0, interactive=False)
    return path


def _container(path: str, adapter: str, **options: Any) -> Any:
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    settings = {
        "db": {"adapter": "sqlfile", "options": {"dsn": path}},
        "crypto": {"options": {"key": base64.b64encode(b"b" * 32).decode()}},
        "webhook": {
            "adapter": adapter,
            "options": {"allow_private_targets": True, **options},
        },
    }
    return Container(Config.load(settings, {}))


def _raw(url: str) -> Any:
    """Return a plain httpx loop sending what ``send`` sends: the same headers and body.

    A fresh ``Webhook-Id`` per request and both signatures of the delivery format (``v1``
    over ``id.timestamp.body``, ``v1e`` over ``id.timestamp.event\\n`` + body), computed
    with ``hmac`` from the secret's key as ``whsec_`` defines it (decoded once, as a sender
    keeping its endpoint's key would): the signed body the issue compares against.
    """
    import os

    import httpx

    client = httpx.Client(timeout=10)
    key = base64.b64decode(SECRET.removeprefix("whsec_"))
    event = "order.paid"

    def mac(content: bytes) -> str:
        return base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()

    def base(n: int) -> None:
        for _ in range(n):
            ident, stamp = os.urandom(16).hex(), str(int(time.time()))
            v1 = mac(f"{ident}.{stamp}.".encode() + BODY)
            v1e = mac(f"{ident}.{stamp}.{event}\n".encode() + BODY)
            client.post(
                url,
                content=BODY,
                headers={
                    "Content-Type": "application/json",
                    "Webhook-Id": ident,
                    "Webhook-Event": event,
                    "Webhook-Timestamp": stamp,
                    "Webhook-Signature": f"v1,{v1} v1e,{v1e}",
                },
            ).raise_for_status()

    return base, client


def bench_http() -> Result:
    """Time ``send`` on the http adapter against raw httpx posting the same signed body."""
    url, server = _receiver()
    container = _container(_migrated_sqlite(), "http")
    hook = container.webhook()
    base, client = _raw(url)

    def ours(n: int) -> None:
        for _ in range(n):
            if not hook.send(url, BODY, event="order.paid", secret=SECRET).ok:
                raise RuntimeError("a delivery failed")

    try:
        mine, theirs = best_interleaved(ours, base, 200, repeats=5)
    finally:
        client.close()
        container.close()
        server.kill()
        server.wait(10)
    return Result(
        f"webhook http send vs raw httpx ({mine / theirs:.2f}x)",
        mine,
        theirs,
        "deliveries/s",
        ">= 0.8x raw httpx",
        mine >= 0.8 * theirs,
        number=",.0f",
    )


def bench_queue() -> Line:
    """Time queued deliveries end to end (4 worker threads) against the raw httpx loop."""
    url, server = _receiver()
    container = _container(
        _migrated_sqlite(), "queue", queue_adapter="memory", queue_opts={"poll_timeout": "100ms"}
    )
    hook = container.webhook()
    worker = hook.worker(concurrency=4)
    worker.start()
    base, client = _raw(url)
    rows = hook._rows()

    def ours(n: int) -> None:
        ids = [hook.send(url, BODY, event="order.paid", secret=SECRET).id for _ in range(n)]
        deadline = time.monotonic() + 120
        while rows.filter(delivery_id__in=ids, status="succeeded").count() < n:
            if time.monotonic() > deadline:
                raise RuntimeError("queued deliveries did not finish")
            time.sleep(0.01)

    try:
        mine, theirs = best_interleaved(ours, base, 200, repeats=5)
    finally:
        worker.stop()
        worker.join(10)
        client.close()
        container.close()
        server.kill()
        server.wait(10)
    # Queued delivery and a synchronous post are not the same work: a figure, no target.
    return Line(
        f"webhook queue (memory, 4 workers) vs raw httpx ({mine / theirs:.2f}x)",
        mine,
        theirs,
        "deliveries/s",
    )


BENCHMARKS = (bench_http, bench_queue)
