"""The outbox adapters, by canonical name (default first, as in the catalog).

Values are dotted paths imported only when an adapter opens.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "db": "toolkit_batteries.outbox.adapters.db.DBOutbox",
    "memory": "toolkit_batteries.outbox.adapters.memory.MemoryOutbox",
    "cdc": "toolkit_batteries.outbox.adapters.cdc.CDCOutbox",
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
    "inmemory": "memory",
    "logical": "cdc",
}
