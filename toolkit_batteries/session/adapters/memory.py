"""The ``memory`` adapter (default): sessions in this process's memory.

Sessions vanish when the process stops and are not shared between processes or
gunicorn workers; use ``kvserver`` or ``db`` as soon as more than one process serves
requests. Each instance is its own store object, so instances never see each other's
sessions. Expired sessions are removed as they are met and by a sweep that pops a heap
ordered by expiry on each write, so memory holds live sessions plus a bounded backlog.
"""

from __future__ import annotations

import heapq
import threading
import time
from datetime import timedelta

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.session.base import DEFAULT_TTL, Clock, SessionStore

__all__ = ["MemorySessionStore"]

#: Expired entries a single write removes at most, so no request pays for a huge backlog.
_SWEEP_BATCH = 64


class MemorySessionStore(SessionStore):
    """A dict of id -> (encoded data, expiry in ms), guarded by one lock."""

    adapter_name = "memory"

    def __init__(
        self,
        *,
        ttl: timedelta = DEFAULT_TTL,
        instance: str = "default",
        clock: Clock = time.time,
    ) -> None:
        super().__init__(ttl=ttl, instance=instance, clock=clock)
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[str, int]] = {}
        #: (expiry, id); entries may be stale after touch/delete and are re-checked.
        self._expiries: list[tuple[int, str]] = []

    @classmethod
    def open(cls, ctx: OpenContext) -> MemorySessionStore:
        """Build an empty store with the configured default ttl."""
        return cls(ttl=ctx.options.ttl, instance=ctx.instance)

    def __len__(self) -> int:
        """Return how many sessions are held, expired ones not yet swept included."""
        return len(self._entries)

    def _insert(self, session_id: str, payload: str, ttl_ms: int) -> bool:
        now = self._now_ms()
        expires = now + ttl_ms
        with self._lock:
            self._sweep(now, _SWEEP_BATCH)
            if session_id in self._entries:
                return False
            self._entries[session_id] = (payload, expires)
            heapq.heappush(self._expiries, (expires, session_id))
            return True

    def _fetch(self, session_id: str) -> str | None:
        now = self._now_ms()
        with self._lock:
            entry = self._live(session_id, now)
            return None if entry is None else entry[0]

    def _replace(self, session_id: str, payload: str) -> bool:
        now = self._now_ms()
        with self._lock:
            entry = self._live(session_id, now)
            if entry is None:
                return False
            self._entries[session_id] = (payload, entry[1])
            return True

    def _extend(self, session_id: str, ttl_ms: int) -> bool:
        now = self._now_ms()
        with self._lock:
            entry = self._live(session_id, now)
            if entry is None:
                return False
            expires = now + ttl_ms
            self._entries[session_id] = (entry[0], expires)
            heapq.heappush(self._expiries, (expires, session_id))
            return True

    def _rewrite(self, session_id: str, payload: str, ttl_ms: int) -> bool:
        now = self._now_ms()
        with self._lock:
            if self._live(session_id, now) is None:
                return False
            expires = now + ttl_ms
            self._entries[session_id] = (payload, expires)
            heapq.heappush(self._expiries, (expires, session_id))
            return True

    def _remove(self, session_id: str) -> None:
        with self._lock:
            self._entries.pop(session_id, None)

    def purge_expired(self) -> int:
        """Remove every expired session now; return how many were removed."""
        now = self._now_ms()
        with self._lock:
            return self._sweep(now, None)

    def _live(self, session_id: str, now: int) -> tuple[str, int] | None:
        """Return the entry if it has not expired; drop it if it has. Hold the lock."""
        entry = self._entries.get(session_id)
        if entry is None:
            return None
        if entry[1] <= now:
            del self._entries[session_id]
            return None
        return entry

    def _sweep(self, now: int, limit: int | None) -> int:
        """Pop expired heap entries (at most ``limit``); return sessions removed."""
        removed = popped = 0
        heap = self._expiries
        while heap and heap[0][0] <= now and (limit is None or popped < limit):
            expires, session_id = heapq.heappop(heap)
            popped += 1
            entry = self._entries.get(session_id)
            if entry is not None and entry[1] == expires:  # not touched since
                del self._entries[session_id]
                removed += 1
        if len(heap) > 2 * len(self._entries) + 1024:  # stale entries from touch/delete
            self._expiries = [(exp, sid) for sid, (_p, exp) in self._entries.items()]
            heapq.heapify(self._expiries)
        return removed
