"""The outbox adapters, by canonical name (default first, as in the catalog).

Values are dotted paths imported only when an adapter opens.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import SQL_ALIASES

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "db": "toolkit_batteries.outbox.adapters.db.DBOutbox",
    "memory": "toolkit_batteries.outbox.adapters.memory.MemoryOutbox",
    "cdc": "toolkit_batteries.outbox.adapters.cdc.CDCOutbox",
}

#: Battery-specific aliases (alias -> canonical): the shared SQL names, and its own.
ALIASES: dict[str, str] = {**SQL_ALIASES, "inmemory": "memory", "logical": "cdc"}
