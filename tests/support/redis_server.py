"""A private ``redis-server`` on a free port that a test may kill and restart.

The shared server on 6379 belongs to every test, so fault tests never touch it: they
start their own (``--save '' --appendonly no``: nothing survives a restart, like a fresh
server), kill it, and start it again on the same port.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.ports import accepting, free_port
from tests.support.processes import wait_until

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


class PrivateRedis:
    """One redis-server process under the test's control (``workdir``: its cwd/dir)."""

    def __init__(self, workdir: Path | None = None) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Return the server's URL (database 0: the server is private)."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def addr(self) -> str:
        """Return ``host:port``."""
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> None:
        """Start the server and wait until it accepts connections."""
        command = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no"]
        if self.workdir is not None:
            command += ["--dir", str(self.workdir)]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.process = process
        if not wait_until(lambda: process.poll() is not None or accepting(self.port), timeout):
            raise RuntimeError("the private redis-server did not start")
        if process.poll() is not None:
            raise RuntimeError("the private redis-server exited at start")

    def kill(self) -> None:
        """Kill the server (SIGKILL: no goodbye to the clients) and reap it."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.process = None

    stop = kill

    def restart(self) -> None:
        """Start the server again on the same port (empty: nothing persisted)."""
        self.kill()
        self.start()


def drop_redis_prefix(target: str | Any, prefix: str) -> None:
    """Delete every key under ``prefix`` (and only those) on the server at URL ``target``.

    ``target`` may also be an open ``redis.Redis`` client, which is left open.
    """
    import redis

    client = redis.Redis.from_url(target) if isinstance(target, str) else target
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        if client is not target:
            client.close()
