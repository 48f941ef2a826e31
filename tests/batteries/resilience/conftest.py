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

from tests.support.clock import FakeClock
from tests.support.logs import route_to_caplog
from tests.support.redis_server import drop_redis_prefix as delete_prefixed
from toolkit_batteries.core.config import Config
from toolkit_batteries.resilience import Policy
from toolkit_batteries.resilience.adapters.kvserver import KVServerPolicy
from toolkit_batteries.resilience.adapters.memory import MemoryPolicy
from toolkit_batteries.resilience.base import settings_from_options

ADAPTERS = ("memory", "kvserver")
SEED = 1234


def options_for(**options: object):
    """Return ``ResilienceOptions`` decoded by the real loader."""
    return Config.load({"resilience": {"options": options}}, {}).service("resilience").options


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(10_000.0)


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
    """Route toolkit records to caplog: these tests read warnings there."""
    route_to_caplog(monkeypatch, "toolkit", "toolkit.resilience")
