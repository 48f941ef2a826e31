"""The ``sqlserver`` adapter: PostgreSQL through Django's psycopg 3 backend.

``dsn`` is required: a ``postgres://`` or ``postgresql://`` URL or a libpq keyword
string (``host=db dbname=app user=app``). The database is Django's connection of the
``DATABASES`` alias for that server and database (``default`` when ``settings.py``
derives ``DATABASES`` with ``django_databases``); a nonzero ``max_conns`` turns on
Django's pool (``OPTIONS["pool"]``). Needs the ``sqlserver`` extra.
"""

from __future__ import annotations

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError, MissingExtraError
from toolkit_batteries.core.pools import parse_sql_target
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.db.base import Database

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


@traced("execute", "execute_many", "fetch_all", "fetch_one", "fetch_value")
class SQLServerDatabase(Database):
    """A PostgreSQL database through Django's connection (pooled when ``max_conns`` > 0)."""

    adapter_name = "sqlserver"

    @classmethod
    def open(cls, ctx: OpenContext) -> SQLServerDatabase:
        """Find (or register) the database's alias and connect; ``dedicated_pool`` is ignored."""
        from toolkit_batteries.db.connections import open_database_alias
        from toolkit_batteries.db.databases import postgres_entry

        dsn = sqlserver_target(ctx.options, service=ctx.service, instance=ctx.instance)
        with MissingExtraError.guard(ctx.service, "sqlserver", "sqlserver", "psycopg"):
            import psycopg  # noqa: F401  (Django's backend needs it; name the extra)
        entry = postgres_entry(dsn, ctx.options, service=ctx.service, instance=ctx.instance)
        return open_database_alias(
            entry, service=ctx.service, instance=ctx.instance, preferred=ctx.instance, cls=cls
        )
