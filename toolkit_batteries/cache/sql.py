"""SQL helpers shared by the DB-backed adapters of ``cache`` and ``idempotency``.

* :func:`open_database`: an empty ``dsn`` borrows the container's ``db`` service (same
  pool, same database); a ``dsn`` asks the container's registry for the pool of that
  DSN, shared with every other service using it unless ``dedicated_pool`` is set.
* :func:`table_name`: each instance gets its own table (``toolkit_cache`` for
  ``default``, ``toolkit_cache_<instance>`` otherwise), so clearing one cache never
  touches another.
* :func:`ensure_table`: ``CREATE TABLE IF NOT EXISTS`` on open; on PostgreSQL under a
  transaction-scoped advisory lock, because two processes creating one table at the same
  moment can otherwise both fail the catalog's unique index.
* :func:`unavailable`: driver errors that mean "the database cannot be used right now"
  become :class:`ServiceUnavailableError`, naming the service and never the DSN.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError
from toolkit_batteries.core.pools import SQLPoolSettings, parse_sql_target

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext
    from toolkit_batteries.db import Database

__all__ = ["ensure_table", "guard", "open_database", "table_name", "valid_identifier"]

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_UNSAFE = re.compile(r"[^a-z0-9_]+")
#: PostgreSQL's identifier limit (NAMEDATALEN - 1).
MAX_IDENTIFIER = 63


def valid_identifier(name: str) -> bool:
    """Tell whether ``name`` is a lower-case SQL identifier safe to format into SQL."""
    return bool(_IDENTIFIER.match(name))


def table_name(base: str, instance: str) -> str:
    """Return the table of ``instance``: ``base`` for ``default``, else ``base_<instance>``.

    The instance name is folded to lower-case letters, digits and underscores; a name
    that would pass 63 characters is cut and given a short hash, so two long instance
    names never share a table.
    """
    if not valid_identifier(base):
        raise ValueError("the table name must be a lower-case SQL identifier")
    if instance == "default":
        return base
    slug = _UNSAFE.sub("_", instance.lower()).strip("_") or "x"
    name = f"{base}_{slug}"
    if len(name) > MAX_IDENTIFIER or slug != instance.lower():
        digest = hashlib.sha256(instance.encode()).hexdigest()[:8]
        name = f"{base}_{slug}"[: MAX_IDENTIFIER - 9] + "_" + digest
    return name


def open_database(ctx: OpenContext) -> Database:
    """Return the database the adapter uses: its own ``dsn``, or the ``db`` service."""
    from toolkit_batteries.db import Database

    options = ctx.options
    dsn = str(getattr(options, "dsn", "") or "").strip()
    if not dsn:
        return ctx.container.db()
    try:
        parse_sql_target(dsn)
    except ValueError as exc:
        raise InvalidOptionsError(ctx.service, "dsn", str(exc), instance=ctx.instance) from None
    pool = ctx.pools.sql(
        ctx.service,
        dsn,
        SQLPoolSettings(),
        instance=ctx.instance,
        dedicated=bool(getattr(options, "dedicated_pool", False)),
    )
    database = Database(pool, instance=ctx.instance)
    database.service_name = ctx.service  # errors name the borrowing service
    return database


def ensure_table(database: Database, statements: Sequence[str]) -> None:
    """Run the ``CREATE ... IF NOT EXISTS`` statements in one transaction."""
    with database.transaction() as tx:
        if database.dialect == "postgresql":
            tx.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
        for statement in statements:
            tx.execute(statement)


#: The advisory lock key held while toolkit adapters create their tables.
_DDL_LOCK = int.from_bytes(hashlib.sha256(b"toolkit-ddl").digest()[:8], "big", signed=True)


@contextmanager
def guard(database: Database, service: str, instance: str) -> Iterator[None]:
    """Turn the driver's "cannot use the database now" errors into ServiceUnavailableError."""
    try:
        yield
    except ServiceUnavailableError:
        raise
    except Exception as exc:
        if _is_unavailable(database, exc):
            raise ServiceUnavailableError(
                service, f"the database cannot be used ({type(exc).__name__})", instance=instance
            ) from None
        raise


def _is_unavailable(database: Database, exc: Exception) -> bool:
    try:
        driver: Any = database.driver
    except Exception:  # a closed stand-in or an unusual pool
        return False
    kinds = tuple(
        kind
        for kind in (
            getattr(driver, "OperationalError", None),
            getattr(driver, "InterfaceError", None),
        )
        if isinstance(kind, type)
    )
    return bool(kinds) and isinstance(exc, kinds)
