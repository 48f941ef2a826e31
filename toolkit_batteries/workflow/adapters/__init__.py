"""The workflow adapters. ``sqlserver`` is the ``db`` adapter under the spec's other name:
both keep runs in the migrated tables, on SQLite or PostgreSQL, whichever database
``dsn`` (or the ``db`` service) names.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(
    __name__, "memory.MemoryWorkflow db.DBWorkflow sqlserver=db.SQLServerWorkflow"
)
