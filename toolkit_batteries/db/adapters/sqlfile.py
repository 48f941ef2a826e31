"""The ``sqlfile`` adapter: an embedded SQLite database file (the default).

The file is ``path``, else ``dsn`` (a path, ``sqlite:///name.db``, a ``file:`` URI or
``:memory:``), else ``db.sqlite3`` in the current directory. The database is Django's
connection of the ``DATABASES`` alias for that file (``default`` when ``settings.py``
derives ``DATABASES`` with ``django_databases``); other services pointed at the same file,
by any spelling of its path, share the alias. ``:memory:`` is private.
"""

from __future__ import annotations

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.pools import parse_sql_target
from toolkit_batteries.db.base import Database

__all__ = ["DEFAULT_PATH", "SQLFileDatabase", "sqlfile_target"]

#: The database file used when neither ``path`` nor ``dsn`` is set.
DEFAULT_PATH = "db.sqlite3"


def sqlfile_target(options: object, *, service: str = "db", instance: str = "default") -> str:
    """Return the file the ``sqlfile`` adapter opens for ``options``."""
    path = str(getattr(options, "path", "") or "").strip()
    dsn = str(getattr(options, "dsn", "") or "").strip()
    field, value = ("path", path) if path else ("dsn", dsn)
    if not value:
        return DEFAULT_PATH
    try:
        target = parse_sql_target(value)
    except ValueError as exc:
        raise InvalidOptionsError(service, field, str(exc), instance=instance) from None
    if target.dialect != "sqlite":
        raise InvalidOptionsError(
            service,
            field,
            "names a PostgreSQL server; the sqlfile adapter needs a file path "
            '(use adapter "sqlserver" for PostgreSQL)',
            instance=instance,
        )
    return value


class SQLFileDatabase(Database):
    """A SQLite file (or ``:memory:``) through Django's sqlite3 backend."""

    adapter_name = "sqlfile"

    @classmethod
    def open(cls, ctx: OpenContext) -> SQLFileDatabase:
        """Find (or register) the file's alias and connect; ``dedicated_pool`` is ignored."""
        from toolkit_batteries.db.connections import open_database_alias
        from toolkit_batteries.db.databases import sqlite_entry

        target = sqlfile_target(ctx.options, service=ctx.service, instance=ctx.instance)
        return open_database_alias(
            sqlite_entry(target),
            service=ctx.service,
            instance=ctx.instance,
            preferred=ctx.instance,
            cls=cls,
        )
