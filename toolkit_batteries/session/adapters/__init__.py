"""The session adapters; redis-py costs nothing to a project that keeps sessions in memory
or in SQL (``redis`` selects ``kvserver``, from the catalog row).
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS = adapter_paths(
    __name__, "memory.MemorySessionStore kvserver.KVServerSessionStore db.DBSessionStore"
)

#: ``sql`` reads naturally for the SQL-backed store.
ALIASES: dict[str, str] = {"sql": "db"}
