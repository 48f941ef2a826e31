"""The retry policy's delay arithmetic, as one pure function.

``backoff(attempt, policy, rng)`` is the delay before retry number ``attempt`` (1 is the
delay between the first and the second attempt). It reads every key of the spec's retry
policy and nothing else, so it is tested deterministically with a seeded or stub ``rng``:

1. growth: ``Linear`` -> ``BaseDelay x attempt``; otherwise
   ``BaseDelay x Multiplier^(attempt-1)`` when ``Multiplier > 1``, else flat ``BaseDelay``;
2. cap: ``MaxDelay`` (when above 0) caps the grown delay, before jitter;
3. jitter, with ``Jitter`` clamped to [0, 1] and ``u = rng.random()`` in [0, 1):

   * ``JitterMode`` 0, symmetric: ``d + d x Jitter x (2u - 1)``, within ``d x (1 +/- Jitter)``;
   * ``JitterMode`` 1, additive: ``d + d x Jitter x u``, never shorter than ``d``;
   * ``JitterMode`` 2, flat: ``d + JitterMax x u``, whatever ``Jitter`` says.

``MaxAttempts`` <= 0 means 1 (:func:`max_attempts`). Delays are seconds (floats); an
exponential growth that overflows is infinite until ``MaxDelay`` caps it.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from toolkit_batteries.core.options import Duration

__all__ = ["Random", "backoff", "max_attempts"]


class Random(Protocol):
    """What :func:`backoff` needs of a random source (``random.Random`` fits)."""

    def random(self) -> float:
        """Return a float in [0, 1)."""
        ...


def max_attempts(policy: Any) -> int:
    """Return the total attempts a policy allows, the first included (at least 1)."""
    attempts = int(policy.max_attempts)
    return attempts if attempts > 0 else 1


def backoff(attempt: int, policy: Any, rng: Random | None = None) -> float:
    """Return the seconds to wait before retry number ``attempt`` (``attempt >= 1``).

    ``rng`` is needed only when the policy jitters; without one the delay is unjittered.
    """
    if attempt < 1:
        raise ValueError("attempt counts retries from 1")
    base = max(0.0, Duration.seconds(policy.base_delay))
    if policy.linear:
        delay = base * attempt
    elif policy.multiplier > 1:
        try:
            delay = base * math.pow(policy.multiplier, attempt - 1)
        except OverflowError:
            delay = math.inf
    else:
        delay = base
    cap = Duration.seconds(policy.max_delay)
    if cap > 0 and delay > cap:
        delay = cap
    if rng is None:
        return delay
    mode = policy.jitter_mode
    if mode == 2:
        return delay + max(0.0, Duration.seconds(policy.jitter_max)) * rng.random()
    jitter = min(1.0, max(0.0, float(policy.jitter)))
    if jitter == 0.0 or delay in (0.0, math.inf):
        return delay
    if mode == 1:
        return delay + delay * jitter * rng.random()
    return delay + delay * jitter * (2.0 * rng.random() - 1.0)
