"""Apply a ``.toolkit`` schema to a database directly (``toolkit db migrate`` outside a project).

Inside a project, Django's migrations own the database. Outside one (or with an explicit
``--dsn``), this package compiles the schema with the ``sql`` backend and brings a SQLite
file or a PostgreSQL database to it by diffing the live catalog (:mod:`.planner`), in one
transaction, recording each statement and its inverse in ``toolkit_schema_migrations``
(:mod:`.ledger`) so that a re-run applies nothing and ``db rollback -n N`` undoes the
newest N statements::

    target = parse_target(None, "app.db")
    result = migrate(target, desired_schema(schema, target.dialect))
    result.applied          # statements run (0 when the database is up to date)
    rollback(target, 1)     # undo the newest one
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from . import ledger
from .desired import DesiredSchema, desired_schema
from .errors import (
    InvalidTargetError,
    MigrationFailedError,
    SqlMigrateError,
    TargetMismatchError,
    UnreachableTargetError,
)
from .planner import Plan, Statement, plan
from .target import ADAPTERS, Connection, Target, connect, mask_dsn, normalize_adapter, parse_target

__all__ = [
    "ADAPTERS",
    "InvalidTargetError",
    "MigrateResult",
    "MigrationFailedError",
    "Plan",
    "RollbackResult",
    "SqlMigrateError",
    "Statement",
    "Target",
    "TargetMismatchError",
    "UnreachableTargetError",
    "desired_schema",
    "mask_dsn",
    "migrate",
    "normalize_adapter",
    "parse_target",
    "plan",
    "rollback",
]

#: PostgreSQL advisory lock key that serialises concurrent migrate/rollback runs.
_LOCK_KEY = 0x746F6F6C6B6974  # "toolkit"


@dataclass(slots=True)
class MigrateResult:
    """What ``migrate`` planned and (unless dry-running) applied."""

    statements: list[Statement]
    warnings: list[str]
    applied: int


@dataclass(slots=True)
class RollbackResult:
    """The ledger rows reversed and the ones skipped (never reversed)."""

    reversed: list[ledger.LedgerRow] = field(default_factory=list)
    skipped: list[ledger.LedgerRow] = field(default_factory=list)
    ledger_missing: bool = False


def _fail(conn: Connection, target: Target, what: str, exc: Exception) -> MigrationFailedError:
    """Turn a driver error during DDL into one redacted line (the transaction rolls back)."""
    from toolkit_batteries.core.redaction import redact_string

    conn.rollback()
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    reason = redact_string(first).replace(target.dsn, target.display)
    return MigrationFailedError(f"{what} failed, nothing was changed: {reason}")


@contextmanager
def _transaction(conn: Connection, target: Target, what: str) -> Iterator[None]:
    """Run the body in one transaction: begin, and on any failure roll back.

    The body commits (or, dry-running, rolls back) itself. A driver error becomes one
    redacted :class:`MigrationFailedError`; anything else is re-raised as it is.
    """
    try:
        conn.begin()
        yield
    except SqlMigrateError:
        conn.rollback()
        raise
    except Exception as exc:
        if not _is_driver_error(exc):
            conn.rollback()
            raise
        raise _fail(conn, target, what, exc) from None


def _lock(conn: Connection) -> None:
    if conn.dialect == "postgres":
        conn.value("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))


def migrate(
    target: Target,
    desired: DesiredSchema,
    *,
    dry_run: bool = False,
    drop_columns: bool = False,
) -> MigrateResult:
    """Plan against the live database and apply the plan in one transaction.

    With ``dry_run`` the database is opened read-only (a missing SQLite file is not
    created) and nothing is written.
    """
    conn = connect(target, read_only=dry_run)
    try:
        if conn is None:  # dry run against a SQLite file that does not exist yet
            found = plan(desired, None, drop_columns=drop_columns)
            return MigrateResult(found.statements, found.warnings, 0)
        with _transaction(conn, target, "migrate"):
            if not dry_run:
                _lock(conn)
            found = plan(desired, conn, drop_columns=drop_columns)
            if dry_run:
                conn.rollback()
                return MigrateResult(found.statements, found.warnings, 0)
            if found.statements:
                ledger.ensure(conn)
            for statement in found.statements:
                conn.run(statement.sql)
                ledger.record(conn, statement.sql, statement.inverse)
            conn.commit()
        return MigrateResult(found.statements, found.warnings, len(found.statements))
    finally:
        if conn is not None:
            conn.close()


def rollback(target: Target, count: int, *, dry_run: bool = False) -> RollbackResult:
    """Reverse the newest ``count`` reversible ledger rows, newest first, in one transaction.

    Rows without an inverse (``CREATE TABLE``; ``CREATE SCHEMA`` of earlier versions) are
    skipped, stay recorded and do not count. A row whose checksum no longer matches stops
    everything.
    """
    result = RollbackResult()
    conn = connect(target, read_only=dry_run)
    if conn is None or not ledger.exists(conn):
        result.ledger_missing = True
        if conn is not None:
            conn.close()
        return result
    try:
        with _transaction(conn, target, "rollback"):
            if not dry_run:
                _lock(conn)
            for row in ledger.newest(conn):
                if len(result.reversed) >= count:
                    break
                if not row.intact:
                    raise MigrationFailedError(
                        f"{ledger.TABLE} row {row.id} does not match its checksum "
                        "(edited by hand?); refusing to roll back",
                    )
                if row.inverse is None:
                    result.skipped.append(row)
                    continue
                result.reversed.append(row)
                if not dry_run:
                    conn.run(row.inverse)
                    ledger.remove(conn, row.id)
            if dry_run:
                conn.rollback()
            else:
                conn.commit()
        return result
    finally:
        conn.close()


def _is_driver_error(exc: Exception) -> bool:
    import sqlite3

    if isinstance(exc, sqlite3.Error):
        return True
    try:
        import psycopg
    except ImportError:
        return False
    return isinstance(exc, psycopg.Error)
