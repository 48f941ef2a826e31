"""Open ratelimit adapters for the contract tests: ``memory`` and ``kvserver`` (real Redis).

Contract tests build the adapters directly so they can inject a fake clock; the
kvserver variant sends the fake clock's time with each call instead of using the
server's ``TIME``. Each kvserver test has its own key prefix and deletes its keys.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest
import redis

from toolkit_batteries.ratelimit.adapters.kvserver import KVServerRateLimiter
from toolkit_batteries.ratelimit.adapters.memory import MemoryRateLimiter
from toolkit_batteries.ratelimit.base import Limits, RateLimiter

from .private_redis import PrivateRedis

ADAPTERS = ("memory", "kvserver")


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock forward."""
        self.now += seconds


def unique_prefix() -> str:
    """Return a key prefix no other test (or helper) uses."""
    return f"t-{uuid.uuid4().hex}:"


def delete_prefixed(client: redis.Redis, prefix: str) -> None:
    """Delete this test's keys, and only those."""
    keys = list(client.scan_iter(match=f"{prefix}*", count=500))
    if keys:
        client.delete(*keys)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
def prefix(redis_client: redis.Redis) -> Iterator[str]:
    value = unique_prefix()
    yield value
    delete_prefixed(redis_client, value)


MakeLimiter = Callable[..., RateLimiter]


@pytest.fixture(params=ADAPTERS)
def make_limiter(request, clock: FakeClock) -> MakeLimiter:
    """Return ``make(rate=, burst=, ...)`` building the parametrised adapter on the fake clock."""
    if request.param == "memory":

        def make(**limits: object) -> RateLimiter:
            return MemoryRateLimiter(Limits(**limits), clock=clock)

        return make
    client = request.getfixturevalue("redis_client")
    key_prefix = request.getfixturevalue("prefix")

    def make_kv(**limits: object) -> RateLimiter:
        return KVServerRateLimiter(client, Limits(**limits), prefix=key_prefix, clock=clock)

    return make_kv


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    server = PrivateRedis()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def container_for() -> Iterator[Callable[..., object]]:
    """Return ``open(block, environ=None)``: a Container with ``TOOLKIT["ratelimit"] = block``."""
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    opened: list[Container] = []

    def build(block: dict, environ: dict | None = None) -> Container:
        container = Container(Config.load({"ratelimit": block}, environ or {}))
        opened.append(container)
        return container

    yield build
    for container in opened:
        container.close()


@pytest.fixture(autouse=True)
def _toolkit_logs_reach_caplog(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let toolkit records reach pytest's handler even if a LOGGING config re-routed them.

    Other tests may leave logging reconfigured (an in-process Celery worker sets the root
    level to ERROR; a project's LOGGING may stop ``toolkit`` propagating); these tests
    read warnings through caplog.
    """
    import logging

    for name in ("toolkit", "toolkit.ratelimit"):
        logger = logging.getLogger(name)
        monkeypatch.setattr(logger, "propagate", True)
        monkeypatch.setattr(logger, "disabled", False)
        monkeypatch.setattr(logger, "level", logging.DEBUG)
