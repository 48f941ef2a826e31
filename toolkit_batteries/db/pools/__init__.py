"""Open a SQL connection pool for a parsed target (PostgreSQL or SQLite).

The :class:`~toolkit_batteries.core.pools.PoolRegistry` calls :func:`open_sql_pool` once
per shared target; everything else borrows the result. The PostgreSQL module imports
psycopg only when a PostgreSQL pool is opened.
"""

from __future__ import annotations

from toolkit_batteries.core.pools import SQLPool, SQLPoolSettings, SQLTarget

__all__ = ["DEFAULT_MAX_CONNS", "open_sql_pool"]

#: Pool size cap when ``max_conns`` is 0, on both dialects.
DEFAULT_MAX_CONNS = 10


def open_sql_pool(
    target: SQLTarget,
    settings: SQLPoolSettings,
    *,
    service: str = "db",
    instance: str = "default",
) -> SQLPool:
    """Open a pool for ``target`` and check that it can connect.

    ``service`` and ``instance`` only name the opener in errors; the DSN never appears.
    """
    if target.dialect == "postgresql":
        from .postgres import PostgresPool

        return PostgresPool.open(target, settings, service=service, instance=instance)
    from .sqlite import SQLitePool

    return SQLitePool.open(target, settings, service=service, instance=instance)
