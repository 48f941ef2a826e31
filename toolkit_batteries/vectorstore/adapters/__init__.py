"""The vectorstore adapters, by canonical name (default first, as in the catalog).

``vecengine`` is Qdrant (``qdrant.py: QdrantVectorStore``). Values are dotted paths,
imported only when an adapter opens, so sqlite-vec and qdrant-client cost nothing to a
project that does not use them. ``db`` runs on PostgreSQL (``postgres``, ``pgvector``) and
SQLite (``sqlite``, ``sqlite-vec``); the spec's older SQL names select it. The vendor
alias ``qdrant`` lives in the shared ``VENDOR_ALIASES`` table of
:mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "db": "toolkit_batteries.vectorstore.adapters.db.DBVectorStore",
    "vecengine": "toolkit_batteries.vectorstore.adapters.qdrant.QdrantVectorStore",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {
    "postgres": "db",
    "postgresql": "db",
    "pgvector": "db",
    "sqlite": "db",
    "sqlite3": "db",
    "sqlite-vec": "db",
    "sqlfile": "db",
    "sqlvector": "db",
    "sqlserver": "db",
}
