"""The retry delays: the spec's retry policy keys, one function for both job paths."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from toolkit_batteries.core.errors import InvalidOptionsError, UnknownFieldError
from toolkit_batteries.core.groups import RetryPolicy
from toolkit_batteries.queue.jobs import backoff_delay, max_attempts, retry_policy
from toolkit_batteries.queue.jobs.backoff import CEILING


def policy(**fields) -> RetryPolicy:
    return retry_policy(fields)


def delays(p: RetryPolicy, attempts: int = 5) -> list[float]:
    return [round(backoff_delay(p, n), 6) for n in range(1, attempts + 1)]


def test_default_policy_is_one_attempt_without_delay():
    default = retry_policy(None)
    assert max_attempts(default) == 1
    assert delays(default) == [0.0] * 5


def test_flat_when_multiplier_is_at_most_one():
    assert delays(policy(base_delay="2s")) == [2.0] * 5
    assert delays(policy(base_delay="2s", multiplier=1)) == [2.0] * 5
    assert delays(policy(base_delay="2s", multiplier=0.5)) == [2.0] * 5


def test_exponential_growth_capped_by_max_delay():
    assert delays(policy(base_delay="1s", multiplier=2)) == [1, 2, 4, 8, 16]
    assert delays(policy(base_delay="1s", multiplier=2, max_delay="5s")) == [1, 2, 4, 5, 5]
    assert delays(policy(base_delay="100ms", multiplier=3), 3) == [0.1, 0.3, 0.9]


def test_linear_ignores_multiplier():
    assert delays(policy(base_delay="2s", linear=True, multiplier=10), 4) == [2, 4, 6, 8]
    assert delays(policy(base_delay="2s", linear=True, max_delay="5s"), 4) == [2, 4, 5, 5]


def test_huge_attempts_stay_finite():
    p = policy(base_delay="1s", multiplier=2)
    assert backoff_delay(p, 5000) == CEILING
    assert backoff_delay(policy(multiplier=2), 5000) == 0.0  # no base: no delay


@pytest.mark.parametrize("mode", [0, 1])
def test_proportional_jitter_stays_in_its_band(mode):
    p = policy(base_delay="10s", jitter=0.5, jitter_mode=mode)
    rng = random.Random(7)
    samples = [backoff_delay(p, 1, rng) for _ in range(500)]
    low = 5.0 if mode == 0 else 10.0
    assert all(low <= s <= 15.0 for s in samples)
    assert min(samples) < low + 0.5 and max(samples) > 14.5  # the band is used
    if mode == 0:
        assert any(s < 10 for s in samples)  # symmetric jitter may shorten


def test_jitter_fraction_is_clamped_to_one():
    p = policy(base_delay="10s", jitter=7, jitter_mode=1)
    rng = random.Random(1)
    assert all(10 <= backoff_delay(p, 1, rng) <= 20 for _ in range(200))


def test_flat_jitter_adds_up_to_jitter_max():
    p = policy(base_delay="1s", jitter_mode=2, jitter_max="500ms", jitter=0.9)
    rng = random.Random(3)
    samples = [backoff_delay(p, 1, rng) for _ in range(300)]
    assert all(1.0 <= s <= 1.5 for s in samples) and max(samples) > 1.45


def test_seeded_jitter_is_reproducible():
    p = policy(base_delay="1s", multiplier=2, jitter=0.3)
    first = [backoff_delay(p, n, random.Random(42)) for n in range(1, 6)]
    again = [backoff_delay(p, n, random.Random(42)) for n in range(1, 6)]
    assert first == again


@pytest.mark.parametrize(("given", "expected"), [(0, 1), (-3, 1), (1, 1), (4, 4)])
def test_max_attempts_below_one_means_one(given, expected):
    assert max_attempts(RetryPolicy(max_attempts=given)) == expected


def test_mapping_keys_match_the_spec_names_in_any_spelling():
    p = retry_policy({"MaxAttempts": 4, "BaseDelay": "250ms", "Multiplier": 2, "JitterMode": 1})
    assert p == RetryPolicy(
        max_attempts=4, base_delay=timedelta(milliseconds=250), multiplier=2.0, jitter_mode=1
    )


def test_bad_policies_name_the_field_not_the_value():
    with pytest.raises(UnknownFieldError, match='did you mean "max_attempts"'):
        retry_policy({"max_attempt": 3})
    with pytest.raises(InvalidOptionsError) as info:
        retry_policy({"base_delay": "soon-ish"})
    assert info.value.field == "base_delay" and "soon-ish" not in str(info.value)
    with pytest.raises(InvalidOptionsError):
        retry_policy({"jitter_mode": 3})
    with pytest.raises(TypeError):
        retry_policy(3)  # type: ignore[arg-type]
