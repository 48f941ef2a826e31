"""The ``memory`` adapter: leases inside this process.

* Leases live in an ordered table, most recently acquired or refreshed last. A released
  lease leaves the table at once; an expired one stays until it is re-acquired or
  evicted.
* At most ``max_entries`` names (default 1000). Acquiring a new name in a full table
  first evicts expired leases, least recently used first; **a live lease is never
  evicted** (that would hand a held lock to a second owner), so a table full of live
  leases makes :meth:`~toolkit_batteries.lock.base.Lock.acquire` raise
  :class:`~toolkit_batteries.lock.base.LockCapacityError`.
* A waiting ``acquire`` sleeps on a condition variable: a release in this process wakes
  it at once; expiry is noticed at the next ``retry_interval``.
* Lease expiry follows :attr:`MemoryLock.clock` (``time.monotonic`` unless replaced), so
  tests move time instead of sleeping.

It serialises threads of one process only; use ``kvserver`` across processes.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from toolkit_batteries.core.adapter import ClosedResource, OpenContext

from ..base import Lock, LockCapacityError, seconds

__all__ = ["DEFAULT_MAX_ENTRIES", "MemoryLock"]

DEFAULT_MAX_ENTRIES = 1000


class MemoryLock(Lock):
    """Leases in a bounded in-process table."""

    adapter_name = "memory"

    def __init__(
        self,
        *,
        ttl: float = 30.0,
        retry_interval: float = 0.05,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
        instance: str = "default",
    ) -> None:
        """Create an empty table of at most ``max_entries`` leases."""
        super().__init__(ttl=ttl, retry_interval=retry_interval, instance=instance)
        self.max_entries = max_entries if max_entries > 0 else DEFAULT_MAX_ENTRIES
        #: The time leases expire by, in seconds.
        self.clock = clock
        #: name -> (owner token, expires at); least recently used first.
        self._leases: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self._cond: Any = threading.Condition()

    @classmethod
    def open(cls, ctx: OpenContext) -> MemoryLock:
        """Open an empty table sized by ``max_entries``."""
        options = ctx.options
        return cls(
            ttl=seconds(options.ttl) or 0.0,
            retry_interval=seconds(options.retry_interval) or 0.0,
            max_entries=int(options.max_entries or 0),
            instance=ctx.instance,
        )

    def __len__(self) -> int:
        """Return the number of leases in the table, expired ones not yet evicted included."""
        return len(self._leases)

    def __bool__(self) -> bool:
        return True

    # ------------------------------------------------------------------ primitives

    def _try_acquire(self, name: str, token: str, ttl: float) -> bool:
        with self._cond:
            now = self.clock()
            held = self._leases.get(name)
            if held is not None and held[1] > now:
                return False
            if held is None and len(self._leases) >= self.max_entries:
                self._evict_expired(now)
                if len(self._leases) >= self.max_entries:
                    raise LockCapacityError(self.instance, self.max_entries)
            self._leases[name] = (token, now + ttl)
            self._leases.move_to_end(name)
            return True

    def _evict_expired(self, now: float) -> None:
        """Drop expired leases, least recently used first, until one slot is free."""
        for name in [n for n, (_, expires) in self._leases.items() if expires <= now]:
            del self._leases[name]
            if len(self._leases) < self.max_entries:
                return

    def _release(self, name: str, token: str) -> bool:
        with self._cond:
            held = self._leases.get(name)
            if held is None or held[0] != token:
                return False
            del self._leases[name]
            self._cond.notify_all()
            return held[1] > self.clock()

    def _refresh(self, name: str, token: str, ttl: float) -> bool:
        with self._cond:
            now = self.clock()
            held = self._leases.get(name)
            if held is None or held[0] != token or held[1] <= now:
                return False
            self._leases[name] = (token, now + ttl)
            self._leases.move_to_end(name)
            return True

    def _extend(self, name: str, token: str, by: float) -> bool:
        with self._cond:
            held = self._leases.get(name)
            if held is None or held[0] != token or held[1] <= self.clock():
                return False
            self._leases[name] = (token, held[1] + by)
            self._leases.move_to_end(name)
            return True

    def _owner(self, name: str) -> str | None:
        with self._cond:
            held = self._leases.get(name)
            return held[0] if held is not None and held[1] > self.clock() else None

    def _pause(self, name: str, delay: float) -> None:
        with self._cond:
            self._cond.wait(delay)

    def close(self) -> None:
        """Forget every lease and wake waiters; later calls raise ServiceUnavailableError."""
        if isinstance(self._cond, ClosedResource):
            return
        with self._cond:
            self._leases.clear()
            self._cond.notify_all()
        self._cond = ClosedResource(self.service_name, self.instance)
