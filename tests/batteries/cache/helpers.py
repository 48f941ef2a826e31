"""Test helpers shared by the cache, lock and idempotency suites.

* :class:`FakeClock`: a callable clock the adapters' ``clock`` attribute accepts, moved
  by hand so TTL tests never sleep.
* :class:`PrivateRedis`: a ``redis-server`` of the test's own on a free port, which the
  test may kill and restart (the shared server on 6379 is never touched).
* :func:`drop_table`: remove a test's table on SQLite or PostgreSQL.
* :func:`forget_runtime_caches`: drop the ``caches`` aliases a test registered at run time,
  so the leases their backends hold on the process-wide Redis clients go back.
"""

from __future__ import annotations

import contextlib
import gc
import shutil
import subprocess
import time
import uuid
from pathlib import Path

from tests.ports import accepting, free_port

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def unique(prefix: str = "t") -> str:
    """Return a fresh lower-case name (instance names, tables, key prefixes)."""
    return f"{prefix}{uuid.uuid4().hex[:12]}"


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``."""
        self.now += seconds


class PrivateRedis:
    """A throwaway ``redis-server`` this test owns (started, killed, restarted by it)."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Return the server's URL (database 0: the server is private)."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
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
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while not accepting(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the private redis-server did not start")
            time.sleep(0.02)

    def kill(self) -> None:
        """Kill the server (SIGKILL) and wait until the port is closed."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def restart(self) -> None:
        """Start the server again on the same port."""
        self.kill()
        self.start()


def drop_table(database, table: str) -> None:
    """Drop ``table`` (a test's own) if it exists."""
    database.execute(f"DROP TABLE IF EXISTS {table}")


def forget_runtime_caches() -> None:
    """Drop the ``caches`` aliases registered at run time, and their backend objects."""
    from django.core.cache import caches

    for alias in [a for a in caches.settings if a.startswith("toolkit_cache_")]:
        caches.settings.pop(alias, None)
        with contextlib.suppress(AttributeError):
            delattr(caches._connections, alias)
    gc.collect()
