"""The resilience adapters: breaker state in the process or shared through Redis
(``redis`` selects ``kvserver``, from the catalog row).
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS = adapter_paths(__name__, "memory.MemoryPolicy kvserver.KVServerPolicy")

#: Other names of the in-process state (alias -> canonical).
ALIASES: dict[str, str] = {"inmemory": "memory", "local": "memory"}
