"""The bulkhead: at most ``max_concurrent`` calls at once, at most ``max_queue`` waiting.

A call that finds every slot taken waits in the queue for up to ``max_wait``; a full
queue, or a wait that runs out, raises :class:`BulkheadFullError` at once, so a stuck
dependency cannot pile up every thread of the process behind it. ``max_queue`` <= 0
means an unbounded queue and ``max_wait`` <= 0 waiting indefinitely (a zero in
configuration means "the default", so write a negative value). Waiters are woken in no
particular order. The bulkhead lives in each process, on both adapters.
"""

from __future__ import annotations

import threading
import time

from .errors import BulkheadFullError

__all__ = ["Bulkhead", "Slot"]


class Slot:
    """One admitted call; :meth:`release` gives the slot back exactly once."""

    __slots__ = ("_bulkhead", "_released")

    def __init__(self, bulkhead: Bulkhead) -> None:
        self._bulkhead = bulkhead
        self._released = False

    def release(self) -> None:
        """Free the slot (again: nothing)."""
        if not self._released:
            self._released = True
            self._bulkhead._release()


class Bulkhead:
    """A counting semaphore with a bounded, time-limited wait."""

    def __init__(
        self,
        max_concurrent: int,
        max_queue: int,
        max_wait: float,
        *,
        instance: str = "default",
    ) -> None:
        self.max_concurrent = max_concurrent
        self.max_queue = max_queue
        self.max_wait = max_wait
        self.instance = instance
        self._cond = threading.Condition(threading.Lock())
        self._active = 0
        self._waiting = 0

    @property
    def active(self) -> int:
        """Return the calls holding a slot (abandoned timed-out calls included)."""
        return self._active

    @property
    def waiting(self) -> int:
        """Return the calls waiting for a slot."""
        return self._waiting

    def acquire(self) -> Slot:
        """Take a slot, waiting up to ``max_wait``; raise :class:`BulkheadFullError`."""
        with self._cond:
            if self._active < self.max_concurrent:
                self._active += 1
                return Slot(self)
            if 0 < self.max_queue <= self._waiting:
                raise BulkheadFullError(
                    self.instance, "every slot is taken and the wait queue is full"
                )
            self._waiting += 1
            try:
                deadline = time.monotonic() + self.max_wait if self.max_wait > 0 else None
                while self._active >= self.max_concurrent:
                    if deadline is None:
                        self._cond.wait()
                        continue
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise BulkheadFullError(self.instance, "no slot freed within max_wait")
                    self._cond.wait(remaining)
                self._active += 1
                return Slot(self)
            finally:
                self._waiting -= 1

    def _release(self) -> None:
        with self._cond:
            self._active -= 1
            self._cond.notify()
