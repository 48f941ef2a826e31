"""The ``sqlserver`` adapter: PostgreSQL through psycopg 3 and psycopg_pool.

``dsn`` is required: a ``postgres://`` or ``postgresql://`` URL or a libpq keyword
string (``host=db dbname=app user=app``). Services configured with the same trimmed DSN
borrow this pool. Needs the ``sqlserver`` extra.
"""

from __future__ import annotations

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.pools import parse_sql_target
from toolkit_batteries.db.base import Database, pool_settings

__all__ = ["SQLServerDatabase", "sqlserver_target"]


def sqlserver_target(options: object, *, service: str = "db", instance: str = "default") -> str:
    """Return the DSN the ``sqlserver`` adapter opens; fail if it is not PostgreSQL."""
    dsn = str(getattr(options, "dsn", "") or "").strip()
    if not dsn:
        raise InvalidOptionsError(
            service, "dsn", "is required by the sqlserver adapter", instance=instance
        )
    try:
        target = parse_sql_target(dsn)
    except ValueError as exc:
        raise InvalidOptionsError(service, "dsn", str(exc), instance=instance) from None
    if target.dialect != "postgresql":
        raise InvalidOptionsError(
            service,
            "dsn",
            "must be a postgres:// URL or a libpq keyword string for the sqlserver adapter",
            instance=instance,
        )
    return dsn


class SQLServerDatabase(Database):
    """A PostgreSQL database through a shared psycopg pool."""

    adapter_name = "sqlserver"

    @classmethod
    def open(cls, ctx: OpenContext) -> SQLServerDatabase:
        """Open (or borrow) the pool for the DSN; ``dedicated_pool`` is ignored."""
        dsn = sqlserver_target(ctx.options, service=ctx.service, instance=ctx.instance)
        pool = ctx.pools.sql(ctx.service, dsn, pool_settings(ctx.options), instance=ctx.instance)
        return cls(pool, instance=ctx.instance)
