"""The ratelimit adapters; redis-py costs nothing to a project that limits in memory
(``redis`` selects ``kvserver``, from the catalog row).
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS = adapter_paths(__name__, "memory.MemoryRateLimiter kvserver.KVServerRateLimiter")

#: Other names of the in-process limiter (alias -> canonical).
ALIASES: dict[str, str] = {"inmemory": "memory", "local": "memory"}
