"""The vectorstore adapters: ``vecengine`` is Qdrant (``qdrant.QdrantVectorStore``, alias
``qdrant`` from the catalog row); sqlite-vec and qdrant-client cost nothing to a project
that does not use them. ``db`` runs on PostgreSQL (``postgres``, ``pgvector``) and SQLite
(``sqlite``, ``sqlite-vec``); the spec's older SQL names select it.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS = adapter_paths(__name__, "db.DBVectorStore vecengine=qdrant.QdrantVectorStore")

#: Every name of the ``db`` adapter's two databases and extensions (alias -> canonical).
ALIASES: dict[str, str] = dict.fromkeys(
    (
        "postgres",
        "postgresql",
        "pgvector",
        "sqlite",
        "sqlite3",
        "sqlite-vec",
        "sqlfile",
        "sqlvector",
        "sqlserver",
    ),
    "db",
)
