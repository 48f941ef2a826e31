"""The scheduler adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so croniter costs nothing
to a project that never schedules. ``embedded`` coordinates processes by claiming each
slot on the ``lock`` service (shared when that is ``kvserver``); ``sqlserver`` (alias
``postgres``) runs the same loop and claims each slot as a row of a SQL table, on
PostgreSQL or a SQLite file (``dsn``, or the container's ``db`` when it is empty).
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "embedded": "toolkit_batteries.scheduler.adapters.embedded.EmbeddedScheduler",
    "sqlserver": "toolkit_batteries.scheduler.adapters.sqlserver.SQLServerScheduler",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {}
