"""The queue adapters; redis-py costs nothing to a project on the ``memory`` or ``db``
queue (``redis`` selects ``kvserver``, from the catalog row). The SQL product names
select ``db``, which runs on either database.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import SQL_ALIASES, adapter_paths

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS = adapter_paths(
    __name__, "memory.MemoryQueue kvserver.KVServerQueue db.DBQueue sqs.SQSQueue"
)

#: The shared SQL names (alias -> canonical).
ALIASES: dict[str, str] = dict(SQL_ALIASES)
