"""Read a provider's ``Retry-After`` header: how long it asks a client to wait.

RFC 9110 allows whole seconds (``120``) or an HTTP date; providers also send fractions
(``0.5``). Anything else, a negative value or a date in the past reads as ``None`` (no
wish expressed). The resilience policy waits at least this long before retrying an error
that carries it as ``retry_after`` (bounded by ``MAX_RETRY_AFTER`` and the policy's
timeout), so a client never retries sooner than the provider asked.
"""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime

__all__ = ["MAX_RETRY_AFTER", "parse_retry_after"]

#: The longest wait a provider's header can impose on one retry (seconds).
MAX_RETRY_AFTER = 60.0


def parse_retry_after(value: object, *, now: float | None = None) -> float | None:
    """Return the seconds ``value`` (a ``Retry-After`` header) asks for, or ``None``."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds or seconds < 0:  # NaN or the past
        return None
    return min(seconds, MAX_RETRY_AFTER)
