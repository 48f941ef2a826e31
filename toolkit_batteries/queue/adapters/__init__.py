"""The queue adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so redis-py costs nothing
to a project on the ``memory`` or ``db`` queue. The vendor alias ``redis`` ->
``kvserver`` lives in the shared ``VENDOR_ALIASES`` table of
:mod:`toolkit_batteries.core.loading`; the SQL product names select ``db``, which runs
on either database.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import SQL_ALIASES

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "memory": "toolkit_batteries.queue.adapters.memory.MemoryQueue",
    "kvserver": "toolkit_batteries.queue.adapters.kvserver.KVServerQueue",
    "db": "toolkit_batteries.queue.adapters.db.DBQueue",
    "sqs": "toolkit_batteries.queue.adapters.sqs.SQSQueue",
}

#: Battery-specific aliases (alias -> canonical): the shared SQL names.
ALIASES: dict[str, str] = dict(SQL_ALIASES)
