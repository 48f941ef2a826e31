"""The retry policy never retries sooner than a provider's ``Retry-After`` asked.

An error carrying ``retry_after`` (adapters read it from the header) makes the wait before
the next attempt at least that long, capped and within the policy's timeout.
"""

from __future__ import annotations

import pytest

from toolkit_batteries.resilience.adapters.memory import MemoryPolicy
from toolkit_batteries.resilience.base import settings_from_options
from toolkit_batteries.resilience.errors import OperationTimeoutError

from .conftest import options_for


class Asked(Exception):
    def __init__(self, retry_after: float | None) -> None:
        super().__init__("provider said wait")
        self.retry_after = retry_after


def test_the_policy_waits_at_least_the_providers_wish():
    waits: list[float] = []
    policy = MemoryPolicy(settings_from_options(options_for(timeout="30s")), sleep=waits.append)
    calls = iter([Asked(9.0), Asked(None), "done"])

    def flaky() -> str:
        outcome = next(calls)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert policy.call(flaky) == "done"
    assert waits[0] == 9.0  # the wish, above the backoff
    assert waits[1] < 9.0  # no wish: the backoff alone


def test_a_wish_past_the_timeout_ends_the_retries_with_the_timeout_error():
    waits: list[float] = []
    policy = MemoryPolicy(settings_from_options(options_for(timeout="5s")), sleep=waits.append)

    def always_busy() -> None:
        raise Asked(30.0)

    with pytest.raises(OperationTimeoutError):
        policy.call(always_busy)
    assert waits == []  # a wait that would end past the deadline is never started
