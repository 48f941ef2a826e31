"""Build resilience policies for the contract tests: ``memory`` and ``kvserver`` (real Redis).

Options go through the real configuration loader (so defaults and zero-means-unset
apply), then the adapter is built with a fake clock whose ``sleep`` advances it, and a
seeded random source. The kvserver breaker runs on the same fake clock (its time is
sent with each call); every kvserver policy gets a unique key prefix, deleted after.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator

import pytest
import redis

from toolkit_batteries.core.config import Config
from toolkit_batteries.resilience import Policy
from toolkit_batteries.resilience.adapters.kvserver import KVServerPolicy
from toolkit_batteries.resilience.adapters.memory import MemoryPolicy
from toolkit_batteries.resilience.base import settings_from_options

ADAPTERS = ("memory", "kvserver")
SEED = 1234


class FakeClock:
    """A clock moved by hand and by ``sleep``, which records what it was asked to wait."""

    def __init__(self, start: float = 10_000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def options_for(**options: object):
    """Return ``ResilienceOptions`` decoded by the real loader."""
    return Config.load({"resilience": {"options": options}}, {}).service("resilience").options


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
    value = f"t-{uuid.uuid4().hex}"
    yield value
    delete_prefixed(redis_client, value)


MakePolicy = Callable[..., Policy]


@pytest.fixture(params=ADAPTERS)
def make_policy(request, clock: FakeClock) -> Iterator[MakePolicy]:
    """Return ``make(**options)`` building the parametrised adapter on the fake clock."""
    built: list[Policy] = []
    adapter = request.param
    client = request.getfixturevalue("redis_client") if adapter == "kvserver" else None
    key_prefix = request.getfixturevalue("prefix") if adapter == "kvserver" else ""

    def make(**options: object) -> Policy:
        settings = settings_from_options(options_for(**options))
        common = {"clock": clock, "sleep": clock.sleep, "rng": random.Random(SEED)}
        if adapter == "memory":
            policy: Policy = MemoryPolicy(settings, **common)
        else:
            policy = KVServerPolicy(
                settings, client, prefix=key_prefix, server_time=False, **common
            )
        built.append(policy)
        return policy

    make.adapter = adapter  # type: ignore[attr-defined]
    yield make
    for policy in built:
        policy.close()


@pytest.fixture(autouse=True)
def _toolkit_logs_reach_caplog(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let toolkit records reach pytest's handler even if a LOGGING config re-routed them.

    Other tests may leave logging reconfigured (an in-process Celery worker sets the root
    level to ERROR; a project's LOGGING may stop ``toolkit`` propagating); these tests
    read warnings through caplog.
    """
    import logging

    for name in ("toolkit", "toolkit.resilience"):
        logger = logging.getLogger(name)
        monkeypatch.setattr(logger, "propagate", True)
        monkeypatch.setattr(logger, "disabled", False)
        monkeypatch.setattr(logger, "level", logging.DEBUG)
