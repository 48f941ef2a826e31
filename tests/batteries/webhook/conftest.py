"""Open the webhook battery the real way on every adapter, and a local receiver.

The receiver is an ``http.server`` on 127.0.0.1 (a free port from ``tests/ports.py``) that
records every request (headers, body, arrival time) and answers from a script of
statuses (then 200). Variants:

* ``http-sqlite``: the ``http`` adapter, delivery rows in a migrated SQLite file;
* ``http-postgres``: the ``http`` adapter, rows in the session's PostgreSQL database;
* ``queue-memory``: the ``queue`` adapter on a memory queue of its own, rows in SQLite;
* ``queue-kvserver``: a kvserver queue on the real Redis (unique prefix), rows in PostgreSQL;
* ``queue-db``: a db queue in PostgreSQL, rows in PostgreSQL.

Queue variants run a real queue ``Worker`` (threads) on the webhook's queue.
"""

from __future__ import annotations

import base64
import http.server
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.ports import free_port
from tests.support.batteries import migrated_sqlite
from tests.support.redis_server import drop_redis_prefix
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

VARIANTS = ("http-sqlite", "http-postgres", "queue-memory", "queue-kvserver", "queue-db")
CRYPTO_KEY = base64.b64encode(b"k" * 32).decode("ascii")
SECRET = "whsec_test_7f3a9c"


@dataclass
class Received:
    """One request the receiver got."""

    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Receiver:
    """A local HTTP receiver answering from ``script`` (statuses), then ``default``."""

    port: int
    requests: list[Received] = field(default_factory=list)
    script: list[int] = field(default_factory=list)
    default: int = 200
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: Any = None

    def url(self, path: str = "/hook", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def wait_for(self, count: int, timeout: float = 15.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.requests) >= count:
                    return list(self.requests)
            time.sleep(0.01)
        with self.lock:
            return list(self.requests)


def start_receiver() -> Receiver:
    """Start a threaded receiver on 127.0.0.1 (stop it with ``receiver.server.shutdown()``)."""
    receiver = Receiver(port=free_port())

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            with receiver.lock:
                receiver.requests.append(
                    Received(self.path, dict(self.headers.items()), body, time.monotonic())
                )
                status = receiver.script.pop(0) if receiver.script else receiver.default
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", "http://127.0.0.1:1/elsewhere")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", receiver.port), Handler)
    server.daemon_threads = True
    receiver.server = server
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    return receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """Start a local receiver; stop it after the test."""
    found = start_receiver()
    try:
        yield found
    finally:
        found.server.shutdown()
        found.server.server_close()


def clear_rows(dsn: str) -> None:
    """Delete the delivery rows and the queue rows of the PostgreSQL database ``dsn``."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        for table in ("toolkit_webhook_delivery", "toolkit_queue_message"):
            conn.execute(f"DELETE FROM {table}")
        conn.execute("DELETE FROM toolkit_queue_dead_letter")


@dataclass
class Opened:
    """An opened webhook instance, its container and (queue variants) its worker."""

    variant: str
    hook: Any
    container: Container
    worker: Any = None

    @property
    def queued(self) -> bool:
        return self.variant.startswith("queue")

    def settle(self, delivery_id: str, timeout: float = 20.0) -> Any:
        """Return the delivery once final (the worker runs queue deliveries)."""
        return self.hook.wait(delivery_id, timeout=timeout)


@pytest.fixture
def make_hook(request, tmp_path: Path) -> Iterator[Callable[..., Opened]]:
    """Return ``make(variant, **options)``: open a webhook (and start its worker)."""
    cleanups: list[Callable[[], None]] = []
    opened: list[Opened] = []

    def sqlite_path() -> str:
        return migrated_sqlite(request, tmp_path, "wh")

    def postgres() -> str:
        dsn = request.getfixturevalue("postgres_dsn")
        clear_rows(dsn)
        cleanups.append(lambda: clear_rows(dsn))
        return dsn

    def make(variant: str, *, worker: bool = True, **options: Any) -> Opened:
        adapter = variant.split("-")[0]
        options.setdefault("allow_private_targets", True)
        db = sqlite_path() if variant in ("http-sqlite", "queue-memory") else postgres()
        if variant == "queue-memory":
            options.update(queue_adapter="memory", queue_opts={"poll_timeout": "200ms"})
        elif variant == "queue-kvserver":
            url = request.getfixturevalue("redis_url")
            prefix = f"twh-{uuid.uuid4().hex}:"
            options.update(
                queue_adapter="kvserver",
                queue_opts={"url": url, "prefix": prefix, "poll_timeout": "200ms"},
            )
            cleanups.append(lambda: drop_redis_prefix(url, prefix))
        elif variant == "queue-db":
            options.update(queue_adapter="db", queue_opts={"dsn": db, "poll_timeout": "200ms"})
        settings = {
            "db": {
                "adapter": "sqlfile" if db.endswith(".sqlite3") else "sqlserver",
                "options": {"dsn": db},
            },
            "crypto": {"options": {"key": CRYPTO_KEY}},
            "webhook": {"adapter": adapter, "options": options},
        }
        container = Container(Config.load(settings, {}))
        hook = container.webhook()
        found = Opened(variant, hook, container)
        if adapter == "queue" and worker:
            found.worker = hook.worker(concurrency=2)
            found.worker.start()
        opened.append(found)
        return found

    yield make
    for found in opened:
        if found.worker is not None:
            found.worker.stop()
            found.worker.join(10)
        found.container.close()
    for cleanup in cleanups:
        cleanup()


@pytest.fixture(params=VARIANTS)
def opened(request, make_hook) -> Opened:
    """Open a webhook on each variant (private targets allowed: the receiver is local)."""
    return make_hook(request.param)
