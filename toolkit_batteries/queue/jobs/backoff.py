"""Retry delays from the spec's retry policy group (``core.groups.RetryPolicy``).

One function, :func:`backoff_delay`, serves the queue worker and the Celery path alike,
so a job waits the same between attempts whichever dispatcher runs it:

* ``linear``: ``base_delay x attempt``; otherwise ``base_delay x multiplier^(attempt-1)``
  when ``multiplier > 1``, else ``base_delay`` flat;
* capped at ``max_delay`` when it is set (0 means unbounded), before jitter;
* jitter: ``jitter`` is clamped to [0, 1]; mode 0 moves the delay by up to
  ``+/- jitter x delay``, mode 1 adds up to ``jitter x delay`` (never shortens), mode 2
  adds up to ``jitter_max`` whatever the delay.

``attempt`` is the number of the attempt that just failed (1 after the first failure).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

from toolkit_batteries.core.groups import RetryPolicy
from toolkit_batteries.core.options import Where, build_options, decode_mapping

__all__ = ["CEILING", "backoff_delay", "max_attempts", "retry_policy"]

#: Longest delay ever returned, in seconds (a day), so a runaway exponent stays finite.
CEILING = 86400.0

_random = random.Random()


def retry_policy(
    value: RetryPolicy | Mapping[str, Any] | None, *, where: str = "job"
) -> RetryPolicy:
    """Return a :class:`RetryPolicy` from a policy, a settings-style mapping, or ``None``.

    A mapping takes the spec's keys in any spelling (``MaxAttempts``, ``max_attempts``) and
    durations as ``"30s"``; unknown keys and bad values raise the usual configuration
    errors, which name the field and never the value. ``None`` is the spec's default: a
    single attempt, no retry.
    """
    if value is None:
        return RetryPolicy()
    if isinstance(value, RetryPolicy):
        return value
    if isinstance(value, Mapping):
        location = Where("queue", where, "retry policy")
        return build_options(RetryPolicy, decode_mapping(RetryPolicy, value, location), location)
    raise TypeError("retry must be a RetryPolicy, a mapping of retry keys, or None")


def max_attempts(policy: RetryPolicy) -> int:
    """Return the total attempts the policy allows, first included (<= 0 means 1)."""
    return max(1, int(policy.max_attempts))


def backoff_delay(policy: RetryPolicy, attempt: int, rng: random.Random | None = None) -> float:
    """Return the seconds to wait after failed attempt number ``attempt`` (1-based)."""
    attempt = max(1, int(attempt))
    base = max(0.0, policy.base_delay.total_seconds())
    if base == 0:
        delay = 0.0
    elif policy.linear:
        delay = base * attempt
    elif policy.multiplier > 1:
        try:
            delay = base * policy.multiplier ** (attempt - 1)
        except OverflowError:
            delay = math.inf
    else:
        delay = base
    cap = policy.max_delay.total_seconds()
    if cap > 0:
        delay = min(delay, cap)
    delay = min(delay, CEILING)
    draw = (rng or _random).random
    jitter = min(1.0, max(0.0, float(policy.jitter)))
    if policy.jitter_mode == 2:
        delay += draw() * max(0.0, policy.jitter_max.total_seconds())
    elif jitter > 0:
        spread = delay * jitter
        delay += spread * (draw() if policy.jitter_mode == 1 else 2 * draw() - 1)
    return min(max(0.0, delay), CEILING)
