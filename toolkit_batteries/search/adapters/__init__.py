"""The search adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so the search server's
client costs nothing to a project on ``db``. ``sqlserver`` and ``sqlfile`` are the older
SQL names of ``db`` (the spec keeps them as aliases; the DSN picks the database either
way); the vendor aliases (``meilisearch`` -> ``searchengine``, ``postgres``, ``sqlite``)
come from the shared table of :mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "db": "toolkit_batteries.search.adapters.db.DBSearch",
    "searchengine": "toolkit_batteries.search.adapters.searchengine.SearchEngineSearch",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {
    "sqlserver": "db",
    "sqlfile": "db",
    "sql": "db",
    "postgres": "db",
    "postgresql": "db",
    "sqlite": "db",
    "sqlite3": "db",
}
