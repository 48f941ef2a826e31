"""The lock adapters; redis-py costs nothing to a project on the memory adapter
(``redis`` selects ``kvserver``, from the catalog row).
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(__name__, "memory.MemoryLock kvserver.KVServerLock")
