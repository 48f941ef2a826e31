"""The outbox adapters; ``db`` answers to the shared SQL names."""

from __future__ import annotations

from toolkit_batteries.core.loading import SQL_ALIASES, adapter_paths

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS = adapter_paths(__name__, "db.DBOutbox memory.MemoryOutbox cdc.CDCOutbox")

#: The shared SQL names, and the battery's own (alias -> canonical).
ALIASES: dict[str, str] = {**SQL_ALIASES, "inmemory": "memory", "logical": "cdc"}
