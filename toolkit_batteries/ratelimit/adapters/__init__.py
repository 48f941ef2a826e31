"""The ratelimit adapters, by canonical name (default first, as in the catalog).

Values are dotted paths imported only when an adapter opens, so redis-py costs nothing to
a project that limits in memory. The vendor alias ``redis`` -> ``kvserver`` lives in the
shared ``VENDOR_ALIASES`` table of :mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "memory": "toolkit_batteries.ratelimit.adapters.memory.MemoryRateLimiter",
    "kvserver": "toolkit_batteries.ratelimit.adapters.kvserver.KVServerRateLimiter",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {"inmemory": "memory", "local": "memory"}
