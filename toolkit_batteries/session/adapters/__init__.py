"""The session adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so redis-py costs nothing
to a project that keeps sessions in memory or in SQL. The vendor alias ``redis`` ->
``kvserver`` lives in the shared ``VENDOR_ALIASES`` table of
:mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "memory": "toolkit_batteries.session.adapters.memory.MemorySessionStore",
    "kvserver": "toolkit_batteries.session.adapters.kvserver.KVServerSessionStore",
    "db": "toolkit_batteries.session.adapters.db.DBSessionStore",
}

#: ``sql`` reads naturally for the SQL-backed store.
ALIASES: dict[str, str] = {"sql": "db"}
