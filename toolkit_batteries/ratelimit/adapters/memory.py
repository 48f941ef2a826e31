"""The ``memory`` adapter: token buckets in a dict of this process (the default).

Buckets live in an ``OrderedDict`` kept in least-recently-used order. A new key beyond
``max_entries`` evicts the least recently used bucket; every ``sweep_interval`` the
next call also drops the buckets idle for ``idle_ttl`` (never before they would be full
again), walking from the old end and stopping at the first live one, so a sweep costs
only what it removes. No background thread runs.

Each process has its own buckets: behind N worker processes a client gets N times the
limit. Use ``kvserver`` to share one budget.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Self

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.ratelimit.base import (
    Decision,
    Limits,
    RateLimiter,
    RateLimiterClosedError,
    check_cost,
    limits_from_options,
)

__all__ = ["MemoryRateLimiter"]


class MemoryRateLimiter(RateLimiter):
    """Thread-safe in-process token buckets with LRU eviction and idle sweeping."""

    adapter_name = "memory"

    def __init__(
        self,
        limits: Limits,
        *,
        instance: str = "default",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Build the limiter; ``clock`` returns seconds (tests pass a fake one)."""
        super().__init__(limits, instance=instance)
        self._clock = clock
        self._lock = threading.Lock()
        #: key -> [tokens, last seen]; least recently used first.
        self._buckets: OrderedDict[str, list[float]] = OrderedDict()
        self._closed = False
        self._next_sweep = clock() + limits.sweep_interval
        #: Buckets dropped because ``max_entries`` was reached (for monitoring).
        self.evictions = 0

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        """Open an empty limiter from the service's options."""
        return cls(limits_from_options(ctx.options, instance=ctx.instance), instance=ctx.instance)

    def __len__(self) -> int:
        """Return how many buckets are held."""
        return len(self._buckets)

    def allow(self, key: str, cost: int = 1) -> Decision:
        """Take ``cost`` tokens from ``key``'s bucket if it has them."""
        limits = self.limits
        burst = limits.burst
        if cost.__class__ is not int or cost < 0 or cost > burst:
            check_cost(cost, burst)
        now = self._clock()
        with self._lock:
            if self._closed:
                raise RateLimiterClosedError(self.instance)
            if now >= self._next_sweep:
                self._sweep(now)
            buckets = self._buckets
            bucket = buckets.get(key)
            if bucket is None:
                if len(buckets) >= limits.max_entries:
                    buckets.popitem(last=False)
                    self.evictions += 1
                tokens = float(burst)
                bucket = buckets[key] = [tokens, now]
            else:
                buckets.move_to_end(key)
                tokens = bucket[0]
                elapsed = now - bucket[1]
                if elapsed > 0:
                    tokens += elapsed * limits.rate
                    if tokens > burst:
                        tokens = float(burst)
                    bucket[1] = now
            if tokens >= cost:
                tokens -= cost
                bucket[0] = tokens
                return Decision(True, int(tokens), 0.0, burst)
            bucket[0] = tokens
        return Decision(False, int(tokens), (cost - tokens) / limits.rate, burst)

    def reset(self, key: str) -> None:
        """Forget ``key``'s bucket."""
        with self._lock:
            if self._closed:
                raise RateLimiterClosedError(self.instance)
            self._buckets.pop(key, None)

    def sweep(self) -> int:
        """Drop the buckets idle long enough now, whatever the schedule; return how many."""
        with self._lock:
            before = len(self._buckets)
            self._sweep(self._clock())
            return before - len(self._buckets)

    def _sweep(self, now: float) -> None:
        """Drop idle buckets from the least recently used end (lock held)."""
        cutoff = now - self.limits.forget_after
        buckets = self._buckets
        while buckets:
            key, bucket = next(iter(buckets.items()))
            if bucket[1] > cutoff:
                break
            del buckets[key]
        self._next_sweep = now + self.limits.sweep_interval

    def close(self) -> None:
        """Drop every bucket; later calls raise :class:`RateLimiterClosedError`."""
        with self._lock:
            self._closed = True
            self._buckets.clear()
