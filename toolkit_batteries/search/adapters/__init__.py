"""The search adapters, by canonical name (default first, as in the catalog).

``searchengine`` is Meilisearch (``meilisearch.py: MeilisearchSearch``). Values are dotted
paths, imported only when an adapter opens, so the Meilisearch client costs nothing to a
project on ``db``. ``db`` runs on PostgreSQL (``postgres``) and SQLite (``sqlite``);
``sqlserver`` and ``sqlfile`` are the spec's older SQL names of it (kept as aliases; the
DSN picks the database either way); ``meilisearch`` comes from the shared table of
:mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import SQL_ALIASES

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "db": "toolkit_batteries.search.adapters.db.DBSearch",
    "searchengine": "toolkit_batteries.search.adapters.meilisearch.MeilisearchSearch",
}

#: Battery-specific aliases (alias -> canonical): the shared SQL names of the ``db`` adapter.
ALIASES: dict[str, str] = dict(SQL_ALIASES)
