"""The ``memory`` adapter: token buckets in a dict of this process (the default).

Buckets live in an ``OrderedDict`` kept in least-recently-used order. A new key beyond
``max_entries`` evicts the least recently used bucket; every ``sweep_interval`` the
next call also drops the buckets idle for ``idle_ttl`` (never before they would be full
again), walking from the old end and stopping at the first live one, so a sweep costs
only what it removes. No background thread runs.

**Eviction forgives nothing.** An evicted bucket that was not full yet leaves its debt
in a fixed table of "full again at" times (one float per cell, at most 65,536 cells),
indexed by the key's hash; a new bucket starts from what its cell says instead of full.
So an attacker who exhausted a bucket (five login guesses) and then sends a thousand
junk keys to push it out finds it exactly as empty as it would have been. Keys sharing
a cell only ever start *emptier* than they should (for at most ``burst / rate``
seconds), never fuller. Keys are bounded (:func:`~toolkit_batteries.ratelimit.base.bounded_key`),
so ``max_entries`` bounds the memory too.

Each process has its own buckets: behind N worker processes a client gets N times the
limit. Use ``kvserver`` to share one budget.
"""

from __future__ import annotations

import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable
from typing import Self

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.ratelimit.base import (
    Decision,
    Limits,
    RateLimiter,
    RateLimiterClosedError,
    bounded_key,
    check_cost,
    limits_from_options,
)

__all__ = ["MemoryRateLimiter"]

#: Bounds of the debt table (cells, each one float): twice ``max_entries``, clamped.
MIN_DEBT_CELLS = 256
MAX_DEBT_CELLS = 65_536


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
        #: cell -> the clock time at which every bucket evicted into it is full again.
        cells = min(MAX_DEBT_CELLS, max(MIN_DEBT_CELLS, 2 * limits.max_entries))
        self._debt = array("d", bytes(8 * cells))
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
        key = bounded_key(key)
        now = self._clock()
        with self._lock:
            if self._closed:
                raise RateLimiterClosedError(self.instance)
            if now >= self._next_sweep:
                self._sweep(now)
            buckets = self._buckets
            bucket = buckets.get(key)
            if bucket is None:
                tokens = self._start_tokens(key, now)
                bucket = self._insert(key, tokens, now)
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
        """Fill ``key``'s bucket again (a deliberate pardon, e.g. after a good login)."""
        key = bounded_key(key)
        with self._lock:
            if self._closed:
                raise RateLimiterClosedError(self.instance)
            self._buckets.pop(key, None)
            now = self._clock()
            if self._debt[self._cell(key)] > now:  # a neighbour's debt: pin a full bucket
                self._insert(key, float(self.limits.burst), now)

    def _cell(self, key: str) -> int:
        # hash() is salted per process, so an attacker cannot aim keys at one cell.
        return hash(key) % len(self._debt)

    def _start_tokens(self, key: str, now: float) -> float:
        """Return the tokens a new bucket for ``key`` starts with (lock held)."""
        limits = self.limits
        owed = self._debt[self._cell(key)] - now
        if owed <= 0:
            return float(limits.burst)
        return max(0.0, limits.burst - owed * limits.rate)

    def _insert(self, key: str, tokens: float, now: float) -> list[float]:
        """Add a bucket, evicting the least recently used one at capacity (lock held)."""
        buckets = self._buckets
        if len(buckets) >= self.limits.max_entries:
            old_key, (old_tokens, seen) = buckets.popitem(last=False)
            self.evictions += 1
            full_at = seen + (self.limits.burst - old_tokens) / self.limits.rate
            cell = self._cell(old_key)
            if full_at > self._debt[cell]:
                self._debt[cell] = full_at
        bucket = buckets[key] = [tokens, now]
        return bucket

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
