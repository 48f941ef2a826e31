"""The scheduler adapters; croniter costs nothing to a project that never schedules.
``embedded`` coordinates processes by claiming each slot on the ``lock`` service (shared
when that is ``kvserver``); ``sqlserver`` (alias ``postgres``) runs the same loop and
claims each slot as a row of a SQL table, on PostgreSQL or a SQLite file (``dsn``, or the
container's ``db`` when it is empty).
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(__name__, "embedded.EmbeddedScheduler sqlserver.SQLServerScheduler")
