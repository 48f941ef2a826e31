"""``MemoryCache``: the memory adapter as a ``CACHES`` backend; ``LOCATION`` names a store."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from ..adapters import memory as memory_adapter
from .common import INSTANCE, decode_options

__all__ = ["MemoryCache"]

_lock = threading.Lock()
_stores: dict[str, memory_adapter.MemoryStore] = {}


class MemoryCache(memory_adapter.MemoryCache):
    """The memory adapter as a ``CACHES`` backend; ``LOCATION`` names a shared store."""

    def __init__(self, name: str, params: Mapping[str, Any]) -> None:
        """Attach to the store called ``name``, creating it from ``OPTIONS`` the first time."""
        options = decode_options("memory", params)
        with _lock:
            store = _stores.get(name)
            if store is None:
                store = _stores[name] = memory_adapter.MemoryStore(
                    max_entries=int(options.max_entries or 0),
                    sweep_interval=options.sweep_interval.total_seconds(),
                )
        super().__init__(params, store=store, instance=INSTANCE, verbose=bool(options.verbose))

    def close(self, **kwargs: Any) -> None:
        """Keep the entries: Django calls this after every request."""
