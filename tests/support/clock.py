"""The one fake clock of the suite: time that moves only when a test moves it.

Adapters take an injectable clock (``clock=`` or a ``.clock`` attribute) so TTLs, leases,
back-off and budgets are tested without sleeping: a real sleep on this shared two-core
machine both slows the suite and flakes when the machine stalls.

``FakeClock`` holds epoch seconds (a float) or an aware ``datetime`` (the scheduler's
clock); ``advance`` and ``sleep`` move either kind, and ``sleep`` records each wait so a
test can assert the back-off a policy asked for.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from typing import Generic, TypeVar

#: A realistic "now" (2023-11-14) for adapters that store absolute epoch times.
EPOCH = 1_700_000_000.0

T = TypeVar("T", float, datetime)


class FakeClock(Generic[T]):
    """A clock moved by hand (``advance``), by ``sleep``, or by ``step`` on every read.

    Thread-safe, because background loops (the embedded scheduler, a worker) read it
    while the test moves it.
    """

    def __init__(self, start: T = 1_000.0, *, step: float | timedelta | None = None) -> None:  # type: ignore[assignment]
        self.now: T = start
        self.step = step
        #: Every ``sleep`` asked of this clock, in order.
        self.sleeps: list[float] = []
        self._lock = threading.Lock()

    def __call__(self) -> T:
        with self._lock:
            current = self.now
            if self.step is not None:
                self.now = self._moved(self.now, self.step)
            return current

    def advance(self, seconds: float = 0.0, **delta: float) -> T:
        """Move time forward by ``seconds`` (and ``timedelta(**delta)``); return the new now."""
        with self._lock:
            self.now = self._moved(self.now, timedelta(seconds=seconds, **delta))
            return self.now

    def sleep(self, seconds: float) -> None:
        """Stand in for ``time.sleep``: remember the wait, then let that much time pass."""
        self.sleeps.append(seconds)
        self.advance(seconds)

    def set(self, **parts: int) -> T:
        """Replace fields of a ``datetime`` clock (``set(hour=3, minute=0)``); return it."""
        with self._lock:
            if not isinstance(self.now, datetime):
                raise TypeError("set() moves a datetime clock; use advance() on seconds")
            self.now = self.now.replace(**parts)
            return self.now

    @staticmethod
    def _moved(now: T, by: float | timedelta) -> T:
        if isinstance(now, datetime):
            return now + (by if isinstance(by, timedelta) else timedelta(seconds=by))
        return now + (by.total_seconds() if isinstance(by, timedelta) else by)


class ElapsesTime:
    """Mixin for an opened battery whose ``clock`` is a :class:`FakeClock` or ``None``.

    The same test runs on the memory adapter (fake time) and on Redis (real time, which
    a fake clock cannot move): ``elapse`` lets time pass the one way the variant allows.
    """

    clock: FakeClock | None

    def elapse(self, seconds: float) -> None:
        """Let ``seconds`` pass: move the fake clock, or really wait on Redis."""
        if self.clock is not None:
            self.clock.advance(seconds)
        else:
            time.sleep(seconds)
