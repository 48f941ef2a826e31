"""The ``sqlfile`` adapter: an embedded SQLite database file (the default).

The file is ``path``, else ``dsn`` (a path, ``sqlite:///name.db``, a ``file:`` URI or
``:memory:``), else ``db.sqlite3`` in the current directory. Other services pointed at
the same file (by any spelling of its path) borrow this pool; ``:memory:`` is private.
"""

from __future__ import annotations

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.pools import parse_sql_target
from toolkit_batteries.db.base import Database, pool_settings

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
    """A SQLite file (or ``:memory:``) through a small pool of sqlite3 connections."""

    adapter_name = "sqlfile"

    @classmethod
    def open(cls, ctx: OpenContext) -> SQLFileDatabase:
        """Open (or borrow) the pool for the configured file; ``dedicated_pool`` is ignored."""
        target = sqlfile_target(ctx.options, service=ctx.service, instance=ctx.instance)
        pool = ctx.pools.sql(ctx.service, target, pool_settings(ctx.options), instance=ctx.instance)
        return cls(pool, instance=ctx.instance)
