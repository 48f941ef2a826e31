"""Open ratelimit adapters for the contract tests: ``memory`` and ``kvserver`` (real Redis).

Contract tests build the adapters directly so they can inject a fake clock; the
kvserver variant sends the fake clock's time with each call instead of using the
server's ``TIME``. Each kvserver test has its own key prefix and deletes its keys.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from tests.support.batteries import BatteryOpener
from tests.support.clock import FakeClock
from tests.support.logs import route_to_caplog
from toolkit_batteries.ratelimit.adapters.kvserver import KVServerRateLimiter
from toolkit_batteries.ratelimit.adapters.memory import MemoryRateLimiter
from toolkit_batteries.ratelimit.base import Limits, RateLimiter

ADAPTERS = ("memory", "kvserver")


def unique_prefix() -> str:
    """Return a key prefix no other test (or helper) uses."""
    return f"t-{uuid.uuid4().hex}:"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def prefix(redis_prefix: str) -> str:
    return redis_prefix


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
def container_for(open_battery: BatteryOpener) -> Callable[..., object]:
    """Return ``open(block, environ=None)``: a Container with ``TOOLKIT["ratelimit"] = block``."""
    return lambda block, environ=None: open_battery.container({"ratelimit": block}, environ)


@pytest.fixture(autouse=True)
def _toolkit_logs_reach_caplog(monkeypatch: pytest.MonkeyPatch) -> None:
    """Route toolkit records to caplog: these tests read warnings there."""
    route_to_caplog(monkeypatch, "toolkit", "toolkit.ratelimit")
