"""The eventbus adapters, by canonical name (default first, as in the catalog).

Values are dotted paths imported only when an adapter opens. The vendor alias
``redis`` -> ``kvserver`` lives in the shared ``VENDOR_ALIASES`` table of
:mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "memory": "toolkit_batteries.eventbus.adapters.memory.MemoryEventBus",
    "kvserver": "toolkit_batteries.eventbus.adapters.kvserver.KVServerEventBus",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {"inmemory": "memory", "local": "memory"}
