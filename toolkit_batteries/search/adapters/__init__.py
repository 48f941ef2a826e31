"""The search adapters: ``searchengine`` is Meilisearch (``meilisearch.MeilisearchSearch``),
whose client costs nothing to a project on ``db``. ``db`` runs on PostgreSQL
(``postgres``) and SQLite (``sqlite``); ``sqlserver`` and ``sqlfile`` are the spec's older
SQL names of it (kept as aliases; the DSN picks the database either way); ``meilisearch``
comes from the catalog row.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import SQL_ALIASES, adapter_paths

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS = adapter_paths(__name__, "db.DBSearch searchengine=meilisearch.MeilisearchSearch")

#: The shared SQL names of the ``db`` adapter (alias -> canonical).
ALIASES: dict[str, str] = dict(SQL_ALIASES)
