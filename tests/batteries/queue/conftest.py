"""Open the queue battery the real way (configuration, then a Container) on every adapter.

``memory`` in process, ``kvserver`` on the real Redis (a unique key prefix per test,
its keys deleted afterwards), ``db`` on a fresh migrated SQLite file and on the
session's migrated PostgreSQL database (its queue tables emptied before and after).
Every queue gets a :class:`FakeClock`, so visibility timeouts and delays are tested by
moving time, not by sleeping; the adapters compute every deadline from ``queue.clock``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.ports import free_port
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.queue import Queue

VARIANTS = ("memory", "kvserver", "db-sqlite", "db-postgres")
ROOT = Path(__file__).resolve().parents[3]
REDIS_SERVER = "/usr/bin/redis-server"


class FakeClock:
    """Epoch seconds that move only when told to."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Opened:
    """An opened queue, its container, its clock, and the settings that built it."""

    variant: str
    queue: Queue
    container: Container
    clock: FakeClock
    settings: dict


def unique(prefix: str = "tq") -> str:
    """Return a name no other test (or helper running in parallel) uses."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def drop_redis_prefix(url: str, prefix: str) -> None:
    """Delete every key under ``prefix`` (and only those)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


def clear_queue_tables(dsn: str) -> None:
    """Delete every row of the db queue's two tables on the PostgreSQL database ``dsn``."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM toolkit_queue_message")
        conn.execute("DELETE FROM toolkit_queue_dead_letter")


def migrated_sqlite(request, directory: Path) -> str:
    """Return the path of a new SQLite file with every migration applied."""
    path = directory / f"{unique('queue')}.db"
    shutil.copyfile(request.getfixturevalue("_sqlite_template"), path)
    return str(path)


@pytest.fixture
def make_queue(request, tmp_path) -> Iterator[Callable[..., Opened]]:
    """Return ``make(variant, **options)``: open a queue; clean its keys/table afterwards."""
    cleanups: list[Callable[[], None]] = []
    containers: list[Container] = []

    def make(variant: str, **options: Any) -> Opened:
        if variant == "memory":
            block = {"adapter": "memory", "options": options}
        elif variant == "kvserver":
            url = request.getfixturevalue("redis_url")
            prefix = f"t-{uuid.uuid4().hex}:"
            block = {"adapter": "kvserver", "options": {"url": url, "prefix": prefix, **options}}
            cleanups.append(lambda: drop_redis_prefix(url, prefix))
        elif variant == "db-sqlite":
            path = migrated_sqlite(request, tmp_path)
            block = {"adapter": "db", "options": {"dsn": path, **options}}
        elif variant == "db-postgres":
            # The session's migrated database: its queue tables start empty in every test.
            dsn = request.getfixturevalue("postgres_dsn")
            clear_queue_tables(dsn)
            block = {"adapter": "db", "options": {"dsn": dsn, **options}}
            cleanups.append(lambda: clear_queue_tables(dsn))
        else:  # pragma: no cover - a typo in a test
            raise ValueError(variant)
        settings = {"queue": block}
        container = Container(Config.load(settings, {}))
        containers.append(container)
        queue = container.queue()
        clock = FakeClock()
        queue.clock = clock
        return Opened(variant, queue, container, clock, settings)

    yield make
    for container in containers:
        container.close()
    for cleanup in cleanups:
        cleanup()


@pytest.fixture(params=VARIANTS)
def opened(request, make_queue) -> Opened:
    """Return an opened queue on each adapter, with a fake clock."""
    return make_queue(request.param)


# ---------------------------------------------------------------------- processes


class PrivateRedis:
    """A redis-server of this test's own, on a free port, that the test may kill."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                REDIS_SERVER,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), 0.2):
                    return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("the private redis-server did not start")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    """Start a private redis-server; kill it at the end of the test."""
    server = PrivateRedis()
    server.start()
    try:
        yield server
    finally:
        server.kill()


def worker_env(**variables: str) -> dict[str, str]:
    """Return the environment of a ``manage.py queue_work`` child process."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("QUEUE_", "TOOLKIT_JOBS"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="tests.settings",
        PYTHONPATH=str(ROOT),
        TOOLKIT_JOBS__IMPORTS="tests.batteries.queue.jobs_fixture",
        PYTHONUNBUFFERED="1",
    )
    env.update(variables)
    return env


def start_worker(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    """Start ``python manage.py queue_work`` with ``args``, its output going to ``log``."""
    with open(log, "ab") as output:
        return subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "queue_work", *args],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_for(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)
