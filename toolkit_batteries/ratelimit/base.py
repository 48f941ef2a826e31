"""The ratelimit service: token buckets keyed by any string.

Every adapter implements :meth:`RateLimiter.allow` with the same arithmetic, so a view
behaves the same in development (``memory``) and behind several workers (``kvserver``):

* a bucket holds at most ``burst`` tokens and starts full;
* it refills continuously at ``rate`` tokens per second;
* ``allow(key, cost)`` takes ``cost`` tokens when the bucket has them and answers
  ``allowed=True``; otherwise it takes nothing and answers how long until it would have.

A bucket left alone for ``idle_ttl`` may be forgotten, but never before it would have
refilled completely (``burst / rate`` seconds), so forgetting a bucket never hands out a
token the arithmetic would have refused. A bucket pushed out early (the ``memory``
adapter at ``max_entries``) leaves its debt behind, so it never comes back fuller than
it would have been either.

Keys are bounded: a key longer than :data:`MAX_KEY_LENGTH` characters is stored as its
first 64 characters plus a SHA-256 digest (:func:`bounded_key`), so a key built from
request data (an email from a 1 MiB body) cannot turn the limiter into a memory lever.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError, ToolkitError

__all__ = [
    "MAX_KEY_LENGTH",
    "Decision",
    "Limits",
    "RateLimiter",
    "RateLimiterClosedError",
    "bounded_key",
    "check_cost",
    "limits_from_options",
]


class RateLimiterClosedError(ToolkitError, RuntimeError):
    """The limiter was closed (its container shut down); build or fetch a new one."""

    code = "ratelimit_closed"

    def __init__(self, instance: str = "default") -> None:
        self.instance = instance
        super().__init__(f"ratelimit.{instance}: the rate limiter is closed")


class Decision:
    """The answer of :meth:`RateLimiter.allow`; read-only by convention.

    ``allowed`` says whether the call may proceed; ``remaining`` is the whole tokens left
    after this decision; ``retry_after`` the seconds until ``cost`` tokens are available
    (``0.0`` when allowed); ``limit`` the bucket size (``burst``). A decision is truthy
    exactly when it is allowed, so ``if limiter.allow(key):`` reads naturally.
    """

    __slots__ = ("allowed", "limit", "remaining", "retry_after")

    def __init__(self, allowed: bool, remaining: int, retry_after: float, limit: int) -> None:
        self.allowed = allowed
        self.remaining = remaining
        self.retry_after = retry_after
        self.limit = limit

    def __bool__(self) -> bool:
        return self.allowed

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Decision):
            return NotImplemented
        return (self.allowed, self.remaining, self.retry_after, self.limit) == (
            other.allowed,
            other.remaining,
            other.retry_after,
            other.limit,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable slots: not hashable

    def __repr__(self) -> str:
        return (
            f"Decision(allowed={self.allowed}, remaining={self.remaining}, "
            f"retry_after={self.retry_after:.3f}, limit={self.limit})"
        )

    @property
    def retry_after_seconds(self) -> int:
        """Return ``retry_after`` as the whole seconds of an HTTP ``Retry-After`` (>= 1)."""
        return max(1, math.ceil(self.retry_after))


class Limits:
    """Validated limits shared by the adapters (seconds as floats)."""

    __slots__ = ("burst", "idle_ttl", "max_entries", "rate", "sweep_interval")

    def __init__(
        self,
        rate: float,
        burst: int,
        idle_ttl: float = 600.0,
        sweep_interval: float = 60.0,
        max_entries: int = 1000,
        *,
        instance: str = "default",
    ) -> None:
        def invalid(field: str, reason: str) -> InvalidOptionsError:
            return InvalidOptionsError("ratelimit", field, reason, instance=instance)

        if not (isinstance(rate, int | float) and math.isfinite(rate) and rate > 0):
            raise invalid("rate", "must be a finite number of tokens per second above 0")
        if isinstance(burst, bool) or not isinstance(burst, int) or burst < 1:
            raise invalid("burst", "must be an integer of at least 1")
        if not idle_ttl > 0:
            raise invalid("idle_ttl", "must be a positive duration")
        if not sweep_interval > 0:
            raise invalid("sweep_interval", "must be a positive duration")
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise invalid("max_entries", "must be an integer of at least 1")
        self.rate = float(rate)
        self.burst = burst
        self.idle_ttl = float(idle_ttl)
        self.sweep_interval = float(sweep_interval)
        self.max_entries = max_entries

    @property
    def refill_time(self) -> float:
        """Return the seconds an empty bucket takes to fill up (``burst / rate``)."""
        return self.burst / self.rate

    @property
    def forget_after(self) -> float:
        """Return how long a bucket must stay idle before it may be forgotten.

        ``idle_ttl``, but never less than the refill time: a forgotten bucket comes back
        full, which is only right once the real one would be full too.
        """
        return max(self.idle_ttl, self.refill_time)


def limits_from_options(options: Any, *, instance: str = "default") -> Limits:
    """Return the validated :class:`Limits` of a ``RateLimitOptions``; raise on bad values."""
    return Limits(
        options.rate,
        options.burst,
        options.idle_ttl.total_seconds(),
        options.sweep_interval.total_seconds(),
        options.max_entries,
        instance=instance,
    )


#: Keys longer than this (characters) are stored as a prefix plus a digest.
MAX_KEY_LENGTH = 200


def bounded_key(key: str) -> str:
    """Return ``key``, or for a key over :data:`MAX_KEY_LENGTH` its head plus a SHA-256.

    Two long keys share a bucket only if their digests collide; a short key that happens
    to spell a digested form shares the long key's bucket, which can only make either of
    them stricter, never looser.
    """
    if not isinstance(key, str):
        raise TypeError("ratelimit key must be a string")
    if len(key) <= MAX_KEY_LENGTH:
        return key
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{key[:64]}#sha256:{digest}"


def check_cost(cost: int, burst: int) -> None:
    """Raise ``ValueError`` for a cost that is not an integer in ``[0, burst]``.

    A cost above the bucket size could never be allowed; answering "retry later" would
    send a client into an endless wait, so it is a programming error instead.
    """
    if isinstance(cost, bool) or not isinstance(cost, int):
        raise TypeError("cost must be an integer")
    if cost < 0:
        raise ValueError("cost must not be negative")
    if cost > burst:
        raise ValueError("cost exceeds the bucket size (burst); it could never be allowed")


class RateLimiter(Service):
    """A token-bucket rate limiter; adapters implement :meth:`allow` and :meth:`reset`."""

    service_name: ClassVar[str] = "ratelimit"

    def __init__(self, limits: Limits, *, instance: str = "default") -> None:
        self.limits = limits
        self.instance = instance

    @property
    def rate(self) -> float:
        """Return the refill rate in tokens per second."""
        return self.limits.rate

    @property
    def burst(self) -> int:
        """Return the bucket size."""
        return self.limits.burst

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} {self.adapter_name} ratelimit.{self.instance} "
            f"rate={self.limits.rate:g}/s burst={self.limits.burst}>"
        )

    def allow(self, key: str, cost: int = 1) -> Decision:
        """Take ``cost`` tokens from ``key``'s bucket if it has them; say what happened.

        ``cost=0`` only reports the bucket. Raise ``ValueError`` for a negative cost or
        one above ``burst``.
        """
        raise NotImplementedError

    def reset(self, key: str) -> None:
        """Forget ``key``'s bucket, so its next call finds it full (after a good login)."""
        raise NotImplementedError
