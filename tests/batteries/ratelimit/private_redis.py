"""A private ``redis-server`` on a free port that a test may kill and restart.

The shared server on 6379 belongs to every helper's tests, so fault tests never touch it:
they start their own (``--save '' --appendonly no``: nothing survives a restart, like a
fresh server), kill it, and start it again on the same port.
"""

from __future__ import annotations

import subprocess
import time

import redis

from tests.ports import free_port

REDIS_SERVER = "/usr/bin/redis-server"


class PrivateRedis:
    """One redis-server process under the test's control."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Return the server's URL (database 0: the server is private)."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def addr(self) -> str:
        """Return ``host:port``."""
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 5.0) -> None:
        """Start the server and wait until it answers PING."""
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
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=0.2)
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    client.ping()
                    return
                except redis.ConnectionError:
                    if time.monotonic() > deadline or self.process.poll() is not None:
                        raise RuntimeError("private redis-server did not start") from None
                    time.sleep(0.02)
        finally:
            client.close()

    def stop(self) -> None:
        """Kill the server (SIGKILL: no goodbye to the clients) and reap it."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)
        self.process = None
