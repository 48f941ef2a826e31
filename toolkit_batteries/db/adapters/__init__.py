"""The db adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so psycopg costs nothing
to a project on SQLite. The vendor aliases ``sqlite``/``sqlite3`` -> ``sqlfile`` and
``postgres``/``postgresql`` -> ``sqlserver`` live in the shared ``VENDOR_ALIASES`` table
of :mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "sqlfile": "toolkit_batteries.db.adapters.sqlfile.SQLFileDatabase",
    "sqlserver": "toolkit_batteries.db.adapters.sqlserver.SQLServerDatabase",
}

#: Battery-specific aliases (alias -> canonical); the shared vendor table covers db.
ALIASES: dict[str, str] = {}
