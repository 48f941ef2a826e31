"""The ``memory`` adapter: idempotency records inside this process.

* One lock guards the table, so a reservation is atomic among threads.
* At most ``max_entries`` records (default 1000) and at most ``max_bytes`` of them
  (:data:`DEFAULT_MAX_BYTES`, 64 MiB: keys, fingerprints and stored responses, plus
  :data:`RECORD_OVERHEAD` per record), so a client storing large responses under many
  keys cannot grow the process without bound. A new key in a full table, or a commit
  that would pass the byte budget, first drops expired records, then evicts the least
  recently used records whatever their state: a bounded table must forget something,
  and an evicted key simply runs again on retry. A single response larger than the
  whole budget is not kept: its commit frees the key and returns False. Size
  ``max_entries`` above the number of keys retried within ``ttl``.
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

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_ENTRIES", "RECORD_OVERHEAD", "MemoryIdempotency"]

DEFAULT_MAX_ENTRIES = 1000
#: Bytes the table may hold (the spec's option table has no byte option; code can pass
#: ``max_bytes`` to :class:`MemoryIdempotency`).
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
#: Bytes counted per record on top of its key, token, fingerprint and response.
RECORD_OVERHEAD = 256

_Found = tuple[ReservationState, str, bytes | None]


@dataclass(slots=True)
class _Record:
    state: ReservationState
    token: str
    fingerprint: str
    payload: bytes | None
    expires_at: float
    size: int = 0

    def measure(self, key: str) -> int:
        """Set and return the bytes this record counts against the budget."""
        self.size = (
            RECORD_OVERHEAD
            + len(key.encode())
            + len(self.token)
            + len(self.fingerprint.encode())
            + len(self.payload or b"")
        )
        return self.size


class MemoryIdempotency(Idempotency):
    """Idempotency records in a bounded in-process table."""

    adapter_name = "memory"

    def __init__(
        self,
        *,
        ttl: float = DEFAULT_TTL,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
        instance: str = "default",
    ) -> None:
        """Create an empty table of at most ``max_entries`` records and ``max_bytes``."""
        super().__init__(ttl=ttl, instance=instance)
        self.max_entries = max_entries if max_entries > 0 else DEFAULT_MAX_ENTRIES
        self.max_bytes = max_bytes if max_bytes > 0 else DEFAULT_MAX_BYTES
        #: Bytes the records hold now (see :data:`RECORD_OVERHEAD`).
        self.bytes = 0
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
            self._drop(key)
            return None
        return record

    def _drop(self, key: str) -> None:
        """Forget ``key``'s record and its bytes. Lock held."""
        record = self._records.pop(key, None)
        if record is not None:
            self.bytes -= record.size

    def _reserve(self, key: str, token: str, fingerprint: str, ttl: float) -> _Found | None:
        with self._lock:
            now = self.clock()
            record = self._live(key, now)
            if record is not None:
                self._records.move_to_end(key)
                return record.state, record.fingerprint, record.payload
            record = _Record(ReservationState.IN_PROGRESS, token, fingerprint, None, now + ttl)
            size = record.measure(key)
            self._make_room(now, entries=1, size=size)
            self._records[key] = record
            self.bytes += size
            return None

    def _make_room(self, now: float, *, entries: int, size: int) -> None:
        """Free room for ``entries`` more records and ``size`` more bytes. Lock held.

        Expired records go first; then the least recently used, whatever their state.
        """
        if not self._over(entries, size):
            return
        for key in [k for k, r in self._records.items() if r.expires_at <= now]:
            self._drop(key)
        while self._records and self._over(entries, size):
            self._drop(next(iter(self._records)))

    def _over(self, entries: int, size: int) -> bool:
        return len(self._records) + entries > self.max_entries or self.bytes + size > self.max_bytes

    def _commit(self, key: str, payload: bytes, ttl: float, token: str) -> bool:
        with self._lock:
            now = self.clock()
            record = self._live(key, now)
            if record is None or record.state is not ReservationState.IN_PROGRESS:
                return False
            if token and record.token != token:
                return False
            self._drop(key)  # re-added below, most recent, with its new size
            record.state, record.payload, record.expires_at = (
                ReservationState.COMPLETED,
                payload,
                now + ttl,
            )
            size = record.measure(key)
            if size > self.max_bytes:
                return False  # larger than the whole budget: the key is freed instead
            self._make_room(now, entries=1, size=size)
            self._records[key] = record
            self.bytes += size
            return True

    def _release(self, key: str, token: str) -> bool:
        with self._lock:
            record = self._live(key, self.clock())
            if record is None or record.state is not ReservationState.IN_PROGRESS:
                return False
            if token and record.token != token:
                return False
            self._drop(key)
            return True

    def _get(self, key: str) -> _Found | None:
        with self._lock:
            record = self._live(key, self.clock())
            return None if record is None else (record.state, record.fingerprint, record.payload)

    def _delete(self, key: str) -> bool:
        with self._lock:
            live = self._live(key, self.clock()) is not None
            self._drop(key)
            return live

    def close(self) -> None:
        """Forget every record; later calls raise ServiceUnavailableError."""
        if isinstance(self._lock, ClosedResource):
            return
        with self._lock:
            self._records.clear()
            self.bytes = 0
        self._lock = ClosedResource(self.service_name, self.instance)
