"""``Policy.call`` on coroutine functions, on both adapters: the same layers, awaited.

The fake clock's ``sleep`` records the backoff (it advances the clock), so retries run
without waiting; the timeout test uses the real clock and a bounded real wait.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from asgiref.sync import iscoroutinefunction

from toolkit_batteries.resilience.adapters.memory import MemoryPolicy
from toolkit_batteries.resilience.base import settings_from_options
from toolkit_batteries.resilience.errors import BreakerOpenError, OperationTimeoutError

from .conftest import options_for


class AsyncFlaky:
    """An ``async def`` callable failing ``failures`` times before answering."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.calls = 0

    async def __call__(self, value: int) -> int:
        self.calls += 1
        await asyncio.sleep(0)
        if self.calls <= self.failures:
            raise ConnectionError(f"failure {self.calls}")
        return value * 2


def test_a_coroutine_is_retried_and_awaited(make_policy, clock):
    policy = make_policy(retry={"BaseDelay": "100ms", "MaxAttempts": 4})
    flaky = AsyncFlaky(failures=2)
    assert asyncio.run(policy.call(flaky.__call__, 21)) == 42
    assert flaky.calls == 3 and len(clock.sleeps) == 2  # the backoff was honoured
    stats = policy.stats()
    assert (stats["calls"], stats["successes"], stats["retries"]) == (1, 1, 2)


def test_exhausted_retries_raise_the_coroutines_last_error(make_policy):
    policy = make_policy()
    flaky = AsyncFlaky(failures=10)
    with pytest.raises(ConnectionError, match="failure 3"):
        asyncio.run(policy.acall(flaky.__call__, 1))
    assert policy.stats()["failures"] == 1


def test_the_breaker_guards_coroutines(make_policy):
    policy = make_policy(breaker={"enabled": True, "consecutive_failures": 2})
    flaky = AsyncFlaky(failures=100)

    async def run() -> None:
        for _ in range(2):
            with pytest.raises(ConnectionError):
                await policy.derive(retry_if=lambda exc: False).acall(flaky.__call__, 1)
        with pytest.raises(BreakerOpenError):
            await policy.acall(flaky.__call__, 1)

    asyncio.run(run())
    assert flaky.calls == 2  # the open breaker refused without calling


def test_a_slow_coroutine_is_cancelled_at_the_timeout():
    policy = MemoryPolicy(settings_from_options(options_for(timeout="300ms")))
    cancelled: list[bool] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    started = time.monotonic()
    with pytest.raises(OperationTimeoutError):
        asyncio.run(policy.call(slow))
    assert time.monotonic() - started < 10  # bounded by the timeout, not the sleep
    assert cancelled == [True]  # nothing is left running, nothing abandoned
    assert policy.stats()["abandoned"] == 0 and policy.stats()["timeouts"] == 1
    policy.close()


def test_decorators_keep_a_coroutine_function(make_policy):
    policy = make_policy()

    async def fetch(value: int) -> int:
        return value + 1

    guarded = policy.decorate(fetch)
    assert iscoroutinefunction(guarded)
    assert asyncio.run(guarded(1)) == 2
