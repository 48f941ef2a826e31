"""The queue adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so redis-py costs nothing
to a project on the ``memory`` or ``db`` queue. The vendor alias ``redis`` ->
``kvserver`` lives in the shared ``VENDOR_ALIASES`` table of
:mod:`toolkit_batteries.core.loading`; the SQL product names select ``db``, which runs
on either database.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "memory": "toolkit_batteries.queue.adapters.memory.MemoryQueue",
    "kvserver": "toolkit_batteries.queue.adapters.kvserver.KVServerQueue",
    "db": "toolkit_batteries.queue.adapters.db.DBQueue",
    "sqs": "toolkit_batteries.queue.adapters.sqs.SQSQueue",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {
    "sql": "db",
    "sqlserver": "db",
    "sqlfile": "db",
    "postgres": "db",
    "postgresql": "db",
    "sqlite": "db",
    "sqlite3": "db",
}
