"""The ``memory`` adapter: idempotency records inside this process.

* One lock guards the table, so a reservation is atomic among threads.
* At most ``max_entries`` records (default 1000). A new key in a full table first drops
  expired records, then evicts the least recently used record whatever its state: a
  bounded table must forget something, and an evicted key simply runs again on retry.
  Size ``max_entries`` above the number of keys retried within ``ttl``.
* Expiry follows :attr:`MemoryIdempotency.clock` (``time.monotonic`` unless replaced),
  so tests move time instead of sleeping.

Records are per process: use ``kvserver`` or ``db`` when several workers serve requests.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolkit_batteries.core.adapter import ClosedResource, OpenContext

from ..base import DEFAULT_TTL, Idempotency, ReservationState

__all__ = ["DEFAULT_MAX_ENTRIES", "MemoryIdempotency"]

DEFAULT_MAX_ENTRIES = 1000

_Found = tuple[ReservationState, str, bytes | None]


@dataclass(slots=True)
class _Record:
    state: ReservationState
    token: str
    fingerprint: str
    payload: bytes | None
    expires_at: float


class MemoryIdempotency(Idempotency):
    """Idempotency records in a bounded in-process table."""

    adapter_name = "memory"

    def __init__(
        self,
        *,
        ttl: float = DEFAULT_TTL,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
        instance: str = "default",
    ) -> None:
        """Create an empty table of at most ``max_entries`` records."""
        super().__init__(ttl=ttl, instance=instance)
        self.max_entries = max_entries if max_entries > 0 else DEFAULT_MAX_ENTRIES
        #: The time records expire by, in seconds.
        self.clock = clock
        self._records: OrderedDict[str, _Record] = OrderedDict()
        self._lock: Any = threading.Lock()

    @classmethod
    def open(cls, ctx: OpenContext) -> MemoryIdempotency:
        """Open an empty table sized by ``max_entries``."""
        options = ctx.options
        return cls(
            ttl=options.ttl.total_seconds(),
            max_entries=int(options.max_entries or 0),
            instance=ctx.instance,
        )

    def size(self) -> int:
        """Return the number of records, expired ones not yet dropped included."""
        return len(self._records)

    def _live(self, key: str, now: float) -> _Record | None:
        record = self._records.get(key)
        if record is None:
            return None
        if record.expires_at <= now:
            del self._records[key]
            return None
        return record

    def _reserve(self, key: str, token: str, fingerprint: str, ttl: float) -> _Found | None:
        with self._lock:
            now = self.clock()
            record = self._live(key, now)
            if record is not None:
                self._records.move_to_end(key)
                return record.state, record.fingerprint, record.payload
            if len(self._records) >= self.max_entries:
                self._make_room(now)
            self._records[key] = _Record(
                ReservationState.IN_PROGRESS, token, fingerprint, None, now + ttl
            )
            return None

    def _make_room(self, now: float) -> None:
        """Drop expired records; if none, evict the least recently used. Lock held."""
        expired = [k for k, r in self._records.items() if r.expires_at <= now]
        for key in expired:
            del self._records[key]
        while len(self._records) >= self.max_entries:
            self._records.popitem(last=False)

    def _commit(self, key: str, payload: bytes, ttl: float, token: str) -> bool:
        with self._lock:
            now = self.clock()
            record = self._live(key, now)
            if record is None or record.state is not ReservationState.IN_PROGRESS:
                return False
            if token and record.token != token:
                return False
            record.state, record.payload, record.expires_at = (
                ReservationState.COMPLETED,
                payload,
                now + ttl,
            )
            self._records.move_to_end(key)
            return True

    def _release(self, key: str, token: str) -> bool:
        with self._lock:
            record = self._live(key, self.clock())
            if record is None or record.state is not ReservationState.IN_PROGRESS:
                return False
            if token and record.token != token:
                return False
            del self._records[key]
            return True

    def _get(self, key: str) -> _Found | None:
        with self._lock:
            record = self._live(key, self.clock())
            return None if record is None else (record.state, record.fingerprint, record.payload)

    def _delete(self, key: str) -> bool:
        with self._lock:
            live = self._live(key, self.clock()) is not None
            self._records.pop(key, None)
            return live

    def close(self) -> None:
        """Forget every record; later calls raise ServiceUnavailableError."""
        if isinstance(self._lock, ClosedResource):
            return
        with self._lock:
            self._records.clear()
        self._lock = ClosedResource(self.service_name, self.instance)
