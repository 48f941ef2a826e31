"""The ``memory`` adapter: a bounded, thread-safe LRU cache inside this process.

``CACHES`` entry: ``LOCATION`` names the store. Django builds one backend object per
thread; every backend with the same ``LOCATION`` and bounds shares one store (as Django's
``LocMemCache`` shares by name), which lives as long as the process. ``OPTIONS`` takes
``max_entries``, ``sweep_interval`` and ``verbose``.

* At most ``max_entries`` entries (default 1000); writing a new key into a full cache
  evicts the least recently used entry (a ``get`` hit counts as a use), in O(1).
* Expired entries are dropped when they are read, and all of them every
  ``sweep_interval`` (default 1 minute), checked on writes: no background thread, so
  nothing outlives the cache.
* Values are copied in and out (pickled), as Django's ``LocMemCache`` does, so mutating a
  returned list never changes the cached one, except immutable scalars (``str``,
  ``bytes``, ``int``, ``float``, ``bool``, ``None``), which need no copy and are stored
  as they are. That is where most of the speed over ``LocMemCache`` comes from.
* Time comes from :attr:`MemoryCache.clock` (``time.monotonic`` unless replaced), so
  tests move time instead of sleeping.

The cache is per process: it cannot share a value between workers.
"""

from __future__ import annotations

import logging
import pickle
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from toolkit_batteries.core.options import Duration

from ..base import DEFAULT_TIMEOUT, Cache, decode_options

__all__ = ["DEFAULT_MAX_ENTRIES", "DEFAULT_SWEEP_INTERVAL", "MemoryCache", "MemoryStore"]

logger = logging.getLogger("toolkit.cache")

DEFAULT_MAX_ENTRIES = 1000
DEFAULT_SWEEP_INTERVAL = 60.0

_PLAIN = frozenset({str, bytes, int, float, bool, type(None)})
_MISSING: Any = object()
_dumps = pickle.dumps
_loads = pickle.loads
_PROTOCOL = pickle.HIGHEST_PROTOCOL
_stores_lock = threading.Lock()
#: (LOCATION, max_entries, sweep_interval) -> the store every backend of it shares.
_stores: dict[tuple[str, int, float], MemoryStore] = {}


class MemoryStore:
    """The entries and their lock; every backend object of one ``LOCATION`` shares one."""

    __slots__ = ("clock", "data", "lock", "max_entries", "sweep_at", "sweep_interval")

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        sweep_interval: float = DEFAULT_SWEEP_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        #: key -> (expires_at or None, value, pickled?); least recently used first.
        self.data: OrderedDict[str, tuple[float | None, Any, bool]] = OrderedDict()
        self.lock = threading.Lock()
        self.max_entries = max_entries if max_entries > 0 else DEFAULT_MAX_ENTRIES
        self.sweep_interval = sweep_interval if sweep_interval > 0 else DEFAULT_SWEEP_INTERVAL
        self.clock = clock
        self.sweep_at = clock() + self.sweep_interval


class MemoryCache(Cache):
    """An in-process LRU cache with expiry."""

    adapter_name = "memory"

    def __init__(self, location: Any, params: Mapping[str, Any]) -> None:
        """Attach to the store ``location`` names, creating it from ``OPTIONS`` the first time."""
        super().__init__(location, params)
        options, _ = decode_options(params, self.instance)
        max_entries = int(options.max_entries or 0)
        max_entries = max_entries if max_entries > 0 else DEFAULT_MAX_ENTRIES
        sweep = Duration.seconds(options.sweep_interval)
        sweep = sweep if sweep > 0 else DEFAULT_SWEEP_INTERVAL
        key = (self.instance, max_entries, sweep)
        with _stores_lock:
            store = _stores.get(key)
            if store is None:
                store = _stores[key] = MemoryStore(max_entries, sweep)
        self._store = store
        self._data = store.data
        self._lock: Any = store.lock
        self.verbose = bool(options.verbose)

    # ------------------------------------------------------------------ clock

    @property
    def clock(self) -> Callable[[], float]:
        """Return the clock entries expire by (seconds; ``time.monotonic`` by default)."""
        return self._store.clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        store = self._store
        with self._lock:
            store.clock = clock
            store.sweep_at = clock() + store.sweep_interval

    @property
    def max_entries(self) -> int:
        """Return how many entries the cache holds before it evicts."""
        return self._store.max_entries

    def size(self) -> int:
        """Return the number of stored entries, expired ones not yet swept included."""
        return len(self._data)

    # ------------------------------------------------------------------ reads

    def get(self, key: str, default: Any = None, version: int | None = None) -> Any:
        """Return the live value of ``key``, or ``default``."""
        key = self.make_and_validate_key(key, version)
        with self._lock:
            entry = self._data.get(key)
            if entry is None:
                return default
            expires = entry[0]
            if expires is not None and expires <= self._store.clock():
                del self._data[key]
                return default
            self._data.move_to_end(key)
        return _loads(entry[1]) if entry[2] else entry[1]

    def get_many(self, keys: Iterable[str], version: int | None = None) -> dict[str, Any]:
        """Return the live values of ``keys`` that exist, by the caller's key."""
        made = {self.make_and_validate_key(key, version): key for key in keys}
        found: dict[str, Any] = {}
        data = self._data
        with self._lock:
            now = self._store.clock()
            for stored, key in made.items():
                entry = data.get(stored)
                if entry is None:
                    continue
                if entry[0] is not None and entry[0] <= now:
                    del data[stored]
                    continue
                data.move_to_end(stored)
                found[key] = entry
        return {key: (_loads(e[1]) if e[2] else e[1]) for key, e in found.items()}

    def has_key(self, key: str, version: int | None = None) -> bool:
        """Tell whether ``key`` holds a live value (without counting it as a use)."""
        key = self.make_and_validate_key(key, version)
        with self._lock:
            entry = self._data.get(key)
            return entry is not None and (entry[0] is None or entry[0] > self._store.clock())

    # ------------------------------------------------------------------ writes

    def _write(
        self, key: str, value: Any, timeout: Any, version: int | None
    ) -> tuple[str, Any, bool, float | None]:
        """Return what ``set`` and ``add`` both start from: the checked key, the stored
        form (plain values as they are, others pickled), and the lifetime in seconds."""
        key = self.make_and_validate_key(key, version)
        if type(value) in _PLAIN:
            payload, pickled = value, False
        else:
            payload, pickled = _dumps(value, _PROTOCOL), True
        return key, payload, pickled, self.expiry_seconds(timeout)

    def set(
        self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> None:
        """Store ``value`` under ``key`` for ``timeout`` seconds."""
        key, payload, pickled, lifetime = self._write(key, value, timeout, version)
        with self._lock:
            now = self._store.clock()
            if lifetime is not None and lifetime <= 0:
                self._data.pop(key, None)
                return
            self._put(key, (None if lifetime is None else now + lifetime, payload, pickled), now)

    def add(
        self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        """Store ``value`` only if ``key`` holds no live value; tell whether it did."""
        key, payload, pickled, lifetime = self._write(key, value, timeout, version)
        with self._lock:
            now = self._store.clock()
            entry = self._data.get(key)
            if entry is not None and (entry[0] is None or entry[0] > now):
                return False
            if lifetime is not None and lifetime <= 0:
                self._data.pop(key, None)  # stored and expired at once, as Django does
                return True
            self._put(key, (None if lifetime is None else now + lifetime, payload, pickled), now)
            return True

    def touch(self, key: str, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        """Give a live ``key`` a new lifetime; tell whether it existed."""
        key = self.make_and_validate_key(key, version)
        lifetime = self.expiry_seconds(timeout)
        with self._lock:
            now = self._store.clock()
            entry = self._data.get(key)
            if entry is None or (entry[0] is not None and entry[0] <= now):
                return False
            if lifetime is not None and lifetime <= 0:
                del self._data[key]
                return True
            self._data[key] = (None if lifetime is None else now + lifetime, entry[1], entry[2])
            self._data.move_to_end(key)
            return True

    def incr(self, key: str, delta: int = 1, version: int | None = None) -> Any:
        """Add ``delta`` to a live value atomically, keeping its expiry.

        Raise ``ValueError`` when the key holds no live value, as Django does.
        """
        key = self.make_and_validate_key(key, version)
        with self._lock:
            entry = self._data.get(key)
            if entry is None or (entry[0] is not None and entry[0] <= self._store.clock()):
                raise ValueError(f"Key '{key}' not found")
            value = (_loads(entry[1]) if entry[2] else entry[1]) + delta
            if type(value) in _PLAIN:
                self._data[key] = (entry[0], value, False)
            else:
                self._data[key] = (entry[0], _dumps(value, _PROTOCOL), True)
            self._data.move_to_end(key)
            return value

    def delete(self, key: str, version: int | None = None) -> bool:
        """Remove ``key``; tell whether it held a live value."""
        key = self.make_and_validate_key(key, version)
        with self._lock:
            entry = self._data.pop(key, None)
            return entry is not None and (entry[0] is None or entry[0] > self._store.clock())

    def delete_many(self, keys: Iterable[str], version: int | None = None) -> None:
        """Remove every key in ``keys``."""
        made = [self.make_and_validate_key(key, version) for key in keys]
        with self._lock:
            for key in made:
                self._data.pop(key, None)

    def clear(self) -> None:
        """Remove every entry of this cache."""
        with self._lock:
            self._data.clear()

    # ------------------------------------------------------------------ housekeeping

    def _put(self, key: str, entry: tuple[float | None, Any, bool], now: float) -> None:
        """Store ``entry``, sweeping and evicting as needed; the lock is held."""
        store, data = self._store, self._data
        if now >= store.sweep_at:
            self._sweep(now)
        if key in data:
            data[key] = entry
            data.move_to_end(key)
            return
        if len(data) >= store.max_entries:
            data.popitem(last=False)
            if self.verbose:
                logger.info("cache.%s: evicted the least recently used entry", self.instance)
        data[key] = entry

    def _sweep(self, now: float) -> int:
        """Drop every expired entry; return how many. The lock is held."""
        data = self._data
        expired = [
            k for k, (expires, _, _) in data.items() if expires is not None and expires <= now
        ]
        for key in expired:
            del data[key]
        self._store.sweep_at = now + self._store.sweep_interval
        if expired and self.verbose:
            logger.info("cache.%s: swept %d expired entries", self.instance, len(expired))
        return len(expired)

    def sweep(self) -> int:
        """Drop every expired entry now; return how many were dropped."""
        with self._lock:
            return self._sweep(self._store.clock())
