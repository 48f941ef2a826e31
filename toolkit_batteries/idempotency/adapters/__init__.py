"""The idempotency adapters; redis-py and psycopg cost nothing to a project on the
memory adapter (``redis`` selects ``kvserver``, from the catalog row).
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(
    __name__, "memory.MemoryIdempotency kvserver.KVServerIdempotency db.DBIdempotency"
)
