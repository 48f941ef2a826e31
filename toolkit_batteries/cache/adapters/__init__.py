"""The cache adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so redis-py and psycopg
cost nothing to a project on the memory cache. The vendor alias ``redis`` ->
``kvserver`` lives in the shared ``VENDOR_ALIASES`` table of
:mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "memory": "toolkit_batteries.cache.adapters.memory.MemoryCache",
    "kvserver": "toolkit_batteries.cache.adapters.kvserver.KVServerCache",
    "db": "toolkit_batteries.cache.adapters.db.DBCache",
}

#: Battery-specific aliases (alias -> canonical); the shared vendor table covers cache.
ALIASES: dict[str, str] = {}
