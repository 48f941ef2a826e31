"""The lock service: named leases with a lifetime, and the :class:`Lease` they return.

::

    lock = services.lock()
    lease = lock.acquire("nightly-report", ttl=60, wait=5)   # Lease, or None if taken
    if lease is not None:
        with lease:                      # releases on exit, even on an error
            build_report()
            lease.refresh()              # another 60 s from now, if still ours

    with lock.hold("nightly-report", wait=5):   # raises LockNotAcquiredError instead
        ...

A lease is a promise with an expiry, not a mutex: once its ``ttl`` passes, another
caller may acquire the name even though the first holder is still running. Keep the work
shorter than the lease, or :meth:`Lease.refresh` it as you go. Every lease carries a
random owner token; release, refresh and extend act only while that token still owns
the name, so a holder whose lease expired can never release its successor's.

Adapters implement five primitives (:meth:`Lock._try_acquire`, ``_release``,
``_refresh``, ``_extend``, ``_owner``); this class does the waiting, the argument checks
and the bookkeeping once for all of them.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import ToolkitError

__all__ = ["Lease", "Lock", "LockCapacityError", "LockNotAcquiredError", "seconds"]

#: Used when options leave ``ttl`` or ``retry_interval`` unset or non-positive.
DEFAULT_TTL = 30.0
DEFAULT_RETRY_INTERVAL = 0.05


class LockNotAcquiredError(ToolkitError):
    """:meth:`Lock.hold` could not acquire the name within ``wait``."""

    code = "lock_not_acquired"
    template = 'lock "{name}" is held by someone else'


class LockCapacityError(ToolkitError):
    """The memory adapter holds ``max_entries`` live leases and never evicts a live one."""

    code = "lock_capacity"
    template = (
        "lock.{instance}: {max_entries} leases are live; raise max_entries "
        "or release leases (live leases are never evicted)"
    )


def seconds(value: timedelta | float | None, *, field: str = "value") -> float | None:
    """Return ``value`` in seconds (``timedelta`` or a number), ``None`` for ``None``."""
    if value is None:
        return None
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{field} must be a timedelta or a number of seconds")
    return float(value)


class Lease:
    """A held lock: its name, owner token and lifetime. Use it as a context manager."""

    __slots__ = ("_lock", "_released", "name", "token", "ttl")

    def __init__(self, lock: Lock, name: str, token: str, ttl: float) -> None:
        self._lock = lock
        #: The name the lease holds.
        self.name = name
        #: The random owner token; only it can release, refresh or extend the lease.
        self.token = token
        #: The lifetime in seconds that :meth:`refresh` renews.
        self.ttl = ttl
        self._released = False

    def release(self) -> bool:
        """Release the name if this lease still owns it; tell whether it did."""
        if self._released:
            return False
        self._released = True
        return self._lock._release(self.name, self.token)

    def refresh(self, ttl: timedelta | float | None = None) -> bool:
        """Restart the lifetime at ``ttl`` (default: the lease's) from now, if still owned."""
        if self._released:
            return False
        lifetime = self._lock._lifetime(ttl) if ttl is not None else self.ttl
        if self._lock._refresh(self.name, self.token, lifetime):
            self.ttl = lifetime
            return True
        return False

    def extend(self, by: timedelta | float) -> bool:
        """Add ``by`` to the time the lease has left, if still owned; tell whether it did."""
        if self._released:
            return False
        amount = seconds(by, field="by")
        if amount is None or amount <= 0:
            raise ValueError("by must be positive")
        return self._lock._extend(self.name, self.token, amount)

    def held(self) -> bool:
        """Tell whether this lease still owns its name (not released, not expired)."""
        return not self._released and self._lock._owner(self.name) == self.token

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def __repr__(self) -> str:
        state = "released" if self._released else "acquired"
        return f"<Lease {self.name!r} {state}, ttl {self.ttl:g}s>"


class Lock(Service):
    """Base of the lock adapters: acquire with retries, hold, and the lease primitives."""

    service_name: ClassVar[str] = "lock"

    def __init__(
        self,
        *,
        ttl: float = DEFAULT_TTL,
        retry_interval: float = DEFAULT_RETRY_INTERVAL,
        instance: str = "default",
    ) -> None:
        """Set the default lease lifetime and the pause between acquire attempts (seconds)."""
        self.default_ttl = ttl if ttl > 0 else DEFAULT_TTL
        self.retry_interval = retry_interval if retry_interval > 0 else DEFAULT_RETRY_INTERVAL
        self.instance = instance

    # ------------------------------------------------------------------ API

    def acquire(
        self,
        name: str,
        ttl: timedelta | float | None = None,
        wait: timedelta | float | None = None,
    ) -> Lease | None:
        """Acquire ``name`` for ``ttl`` (default: the ``ttl`` option); ``None`` if taken.

        ``wait`` ``None`` or 0 tries once; otherwise attempts repeat every
        ``retry_interval`` until ``wait`` has passed.
        """
        self._check_name(name)
        lifetime = self._lifetime(ttl)
        patience = seconds(wait, field="wait") or 0.0
        if patience < 0:
            raise ValueError("wait must not be negative")
        token = secrets.token_hex(16)
        deadline = time.monotonic() + patience
        while True:
            if self._try_acquire(name, token, lifetime):
                return Lease(self, name, token, lifetime)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self._pause(name, min(self.retry_interval, remaining))

    @contextmanager
    def hold(
        self,
        name: str,
        ttl: timedelta | float | None = None,
        wait: timedelta | float | None = None,
    ) -> Iterator[Lease]:
        """Hold ``name`` for a ``with`` block; raise :class:`LockNotAcquiredError` if taken."""
        lease = self.acquire(name, ttl=ttl, wait=wait)
        if lease is None:
            raise LockNotAcquiredError(name)
        with lease:
            yield lease

    def locked(self, name: str) -> bool:
        """Tell whether someone holds ``name`` right now."""
        self._check_name(name)
        return self._owner(name) is not None

    # ------------------------------------------------------------------ helpers

    def _lifetime(self, ttl: timedelta | float | None) -> float:
        lifetime = seconds(ttl, field="ttl")
        if lifetime is None:
            return self.default_ttl
        if lifetime <= 0:
            raise ValueError("ttl must be positive")
        return lifetime

    @staticmethod
    def _check_name(name: Any) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError("a lock name must be a non-empty string")

    def _pause(self, name: str, delay: float) -> None:
        """Wait before the next attempt; adapters that can be woken early override this."""
        time.sleep(delay)

    # ------------------------------------------------------------------ primitives

    def _try_acquire(self, name: str, token: str, ttl: float) -> bool:
        """Take ``name`` for ``token`` if it is free or expired; tell whether it did."""
        raise NotImplementedError

    def _release(self, name: str, token: str) -> bool:
        """Free ``name`` if ``token`` owns it; tell whether it did."""
        raise NotImplementedError

    def _refresh(self, name: str, token: str, ttl: float) -> bool:
        """Set the remaining lifetime to ``ttl`` if ``token`` owns ``name``."""
        raise NotImplementedError

    def _extend(self, name: str, token: str, by: float) -> bool:
        """Add ``by`` to the remaining lifetime if ``token`` owns ``name``."""
        raise NotImplementedError

    def _owner(self, name: str) -> str | None:
        """Return the token that owns ``name`` now, or ``None``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} lock.{self.instance}>"
