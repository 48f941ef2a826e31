"""The workflow adapters, by canonical name (default first, as in the catalog).

``sqlserver`` is the ``db`` adapter under the spec's other name: both keep runs in the
migrated tables, on SQLite or PostgreSQL, whichever database ``dsn`` (or the ``db``
service) names.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "memory": "toolkit_batteries.workflow.adapters.memory.MemoryWorkflow",
    "db": "toolkit_batteries.workflow.adapters.db.DBWorkflow",
    "sqlserver": "toolkit_batteries.workflow.adapters.db.SQLServerWorkflow",
}

#: Battery-specific aliases (alias -> canonical); the shared vendor table covers the rest.
ALIASES: dict[str, str] = {}
