"""The pure backoff function, mode by mode, with stub and seeded random sources."""

from __future__ import annotations

import math
import random
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit_batteries.core.groups import ResilienceRetryPolicy, RetryPolicy
from toolkit_batteries.resilience import backoff, max_attempts


class Fixed:
    """A random source that always answers ``value``."""

    def __init__(self, value: float) -> None:
        self.value = value

    def random(self) -> float:
        return self.value


def ms(value: float) -> timedelta:
    return timedelta(milliseconds=value)


def policy(**fields) -> RetryPolicy:
    return RetryPolicy(**fields)


def test_resilience_defaults_double_from_50ms_and_cap_at_2s():
    p = ResilienceRetryPolicy()
    assert [backoff(n, p) for n in range(1, 8)] == pytest.approx(
        [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 2.0]
    )
    assert max_attempts(p) == 3


def test_multiplier_of_one_or_less_keeps_the_delay_flat():
    for multiplier in (0.0, 0.5, 1.0):
        p = policy(base_delay=ms(100), multiplier=multiplier)
        assert [backoff(n, p) for n in (1, 2, 5)] == pytest.approx([0.1, 0.1, 0.1])


def test_linear_grows_by_base_delay_and_ignores_multiplier():
    p = policy(base_delay=ms(100), multiplier=10, linear=True, max_delay=ms(350))
    assert [backoff(n, p) for n in (1, 2, 3, 4, 9)] == pytest.approx([0.1, 0.2, 0.3, 0.35, 0.35])


def test_zero_max_delay_is_unbounded_and_overflow_is_infinite_until_capped():
    p = policy(base_delay=ms(1), multiplier=10)
    assert backoff(10, p) == pytest.approx(1e6)
    assert backoff(400, p) == math.inf
    capped = policy(base_delay=ms(1), multiplier=10, max_delay=timedelta(seconds=30))
    assert backoff(400, capped) == 30.0


@pytest.mark.parametrize(
    ("u", "expected"), [(0.0, 0.9), (0.25, 0.95), (0.5, 1.0), (0.75, 1.05), (0.999999, 1.1)]
)
def test_symmetric_jitter_spreads_both_ways(u, expected):
    p = policy(base_delay=timedelta(seconds=1), jitter=0.1, jitter_mode=0)
    assert backoff(1, p, Fixed(u)) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(("u", "expected"), [(0.0, 2.0), (0.5, 2.25), (0.999999, 2.5)])
def test_additive_jitter_never_shortens(u, expected):
    p = policy(base_delay=timedelta(seconds=1), multiplier=2, jitter=0.25, jitter_mode=1)
    assert backoff(2, p, Fixed(u)) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(("u", "expected"), [(0.0, 0.5), (0.5, 0.55), (0.999999, 0.6)])
def test_flat_jitter_adds_up_to_jitter_max_whatever_jitter_says(u, expected):
    for jitter in (0.0, 0.9):
        p = policy(base_delay=ms(500), jitter=jitter, jitter_mode=2, jitter_max=ms(100))
        assert backoff(1, p, Fixed(u)) == pytest.approx(expected, abs=1e-6)


def test_jitter_is_clamped_to_one_and_the_cap_applies_before_jitter():
    p = policy(base_delay=timedelta(seconds=4), max_delay=timedelta(seconds=2), jitter=5)
    assert backoff(1, p, Fixed(0.0)) == 0.0  # 2 s - 2 s x 1
    assert backoff(1, p, Fixed(0.999999)) == pytest.approx(4.0, abs=1e-5)
    negative = policy(base_delay=timedelta(seconds=1), jitter=-3)
    assert backoff(1, negative, Fixed(0.0)) == 1.0


def test_no_rng_means_no_jitter_and_attempt_counts_from_one():
    p = ResilienceRetryPolicy()
    assert backoff(1, p) == 0.05
    with pytest.raises(ValueError, match="from 1"):
        backoff(0, p)


@pytest.mark.parametrize(("given", "expected"), [(-3, 1), (0, 1), (1, 1), (7, 7)])
def test_max_attempts_of_zero_or_less_means_one(given, expected):
    assert max_attempts(policy(max_attempts=given)) == expected


def test_a_seeded_source_gives_a_reproducible_sequence():
    p = ResilienceRetryPolicy()
    first = [backoff(n, p, random.Random(42)) for n in range(1, 6)]
    again = [backoff(n, p, random.Random(42)) for n in range(1, 6)]
    assert first == again
    assert first != [backoff(n, p) for n in range(1, 6)]  # it did jitter


@given(
    attempt=st.integers(1, 60),
    base=st.integers(0, 5_000),
    multiplier=st.floats(0, 4),
    jitter=st.floats(-1, 2),
    mode=st.sampled_from([0, 1, 2]),
    u=st.floats(0, 1, exclude_max=True),
)
def test_jitter_stays_within_its_band(attempt, base, multiplier, jitter, mode, u):
    p = policy(
        base_delay=ms(base),
        multiplier=multiplier,
        max_delay=timedelta(seconds=60),
        jitter=jitter,
        jitter_mode=mode,
        jitter_max=ms(250),
    )
    plain = backoff(attempt, p)
    assert 0 <= plain <= 60
    jittered = backoff(attempt, p, Fixed(u))
    j = min(1.0, max(0.0, jitter))
    if mode == 0:
        assert plain * (1 - j) - 1e-9 <= jittered <= plain * (1 + j) + 1e-9
    elif mode == 1:
        assert plain - 1e-9 <= jittered <= plain * (1 + j) + 1e-9
    else:
        assert plain - 1e-9 <= jittered <= plain + 0.25 + 1e-9
