"""Where ``db migrate`` outside a project applies DDL: a SQLite file or a PostgreSQL URL.

:func:`parse_target` turns ``--adapter`` and ``--dsn`` into a :class:`Target`;
:func:`connect` opens one DB-API connection with transactions under our control (SQLite in
autocommit mode with explicit ``BEGIN``, psycopg with ``autocommit=False``), so a whole
migration is one transaction on both. The DSN itself is never printed: use
:attr:`Target.display` (the password becomes ``***``).
"""

from __future__ import annotations

import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .errors import (
    InvalidTargetError,
    SqlMigrateError,
    TargetMismatchError,
    UnreachableTargetError,
)

__all__ = [
    "ADAPTERS",
    "Connection",
    "Target",
    "connect",
    "mask_dsn",
    "normalize_adapter",
    "parse_target",
]

#: Canonical adapter -> codegen SQL dialect.
ADAPTERS = {"sqlfile": "sqlite", "sqlserver": "postgres"}
_ALIASES = {
    "sqlfile": "sqlfile",
    "sqlite": "sqlfile",
    "sqlite3": "sqlfile",
    "sqlserver": "sqlserver",
    "postgres": "sqlserver",
    "postgresql": "sqlserver",
}
_URL_PASSWORD = re.compile(r"(?P<head>[a-zA-Z][a-zA-Z0-9+.\-]*://[^:@/\s]*):[^@/\s]*@")
_KEYWORD_PASSWORD = re.compile(r"(?i)\b(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)")
#: Seconds a PostgreSQL connection attempt may take before the server counts as down.
CONNECT_TIMEOUT = 5


def mask_dsn(dsn: str) -> str:
    """Return ``dsn`` with its password replaced by ``***`` (URL or libpq keywords)."""
    text = _URL_PASSWORD.sub(lambda m: f"{m['head']}:***@", dsn.strip())
    return _KEYWORD_PASSWORD.sub(lambda m: f"{m[1]}***", text)


def normalize_adapter(name: str) -> str:
    """Return the canonical adapter for ``name`` (``sqlite`` -> ``sqlfile``), for argparse."""
    canonical = _ALIASES.get(name.strip().lower())
    if canonical is None:
        raise ValueError(name)
    return canonical


@dataclass(frozen=True, slots=True)
class Target:
    """A database to migrate: the adapter, its SQL dialect and the (secret) DSN."""

    adapter: str
    #: ``"sqlite"`` or ``"postgres"`` (the codegen ``sql`` backend's dialect names).
    dialect: str
    #: The DSN as given; may hold a password, never print it.
    dsn: str
    #: SQLite: the absolute file path (or ``:memory:``). PostgreSQL: the DSN.
    location: str

    @property
    def display(self) -> str:
        """Return the DSN as it may be printed (password masked)."""
        return self.location if self.dialect == "sqlite" else mask_dsn(self.dsn)

    @property
    def endpoint(self) -> str:
        """Return ``host:port`` of a server (or the file path), for error messages."""
        if self.dialect == "sqlite":
            return self.location
        from toolkit_batteries.db.databases import parse_conninfo

        try:
            params = parse_conninfo(self.dsn)
        except ValueError:
            return "the server"
        host = params.get("host") or params.get("hostaddr") or "localhost"
        return f"{host}:{params.get('port') or 5432}"


def parse_target(adapter: str | None, dsn: str) -> Target:
    """Build the target for ``--adapter`` / ``--dsn``; infer the adapter from the DSN."""
    from toolkit_batteries.core.pools import parse_sql_target

    try:
        parsed = parse_sql_target(dsn)
    except ValueError as exc:
        raise InvalidTargetError(f"--dsn {exc}") from None
    inferred = "sqlserver" if parsed.dialect == "postgresql" else "sqlfile"
    chosen = adapter or inferred
    if chosen != inferred:
        want = "a postgres:// URL" if chosen == "sqlserver" else "a file path"
        got = "a PostgreSQL DSN" if inferred == "sqlserver" else "a file path"
        raise TargetMismatchError(f"--adapter {chosen} needs {want} as --dsn (got {got})")
    return Target(chosen, ADAPTERS[chosen], dsn.strip(), parsed.location)


class Connection:
    """One DB-API connection with the few operations the migrator needs."""

    def __init__(self, raw: Any, dialect: str) -> None:
        self.raw = raw
        self.dialect = dialect
        self._param = "?" if dialect == "sqlite" else "%s"

    def sql(self, text: str) -> str:
        """Rewrite ``%s`` placeholders for the driver."""
        return text.replace("%s", self._param)

    def rows(self, text: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Run a query with ``%s`` placeholders and return every row."""
        cursor = self.raw.cursor()
        try:
            cursor.execute(self.sql(text), params)
            return [tuple(row) for row in cursor.fetchall()]
        finally:
            cursor.close()

    def value(self, text: str, params: tuple[Any, ...] = ()) -> Any:
        """Run a query and return the first column of its first row (or ``None``)."""
        found = self.rows(text, params)
        return found[0][0] if found else None

    def run(self, statement: str, params: tuple[Any, ...] | None = None) -> None:
        """Execute one statement (DDL as written when ``params`` is ``None``)."""
        cursor = self.raw.cursor()
        try:
            if params is None:
                cursor.execute(statement)
            else:
                cursor.execute(self.sql(statement), params)
        finally:
            cursor.close()

    def begin(self) -> None:
        """Start the one transaction everything runs in (SQLite takes the write lock)."""
        if self.dialect == "sqlite":
            self.raw.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        """Commit the transaction."""
        self.raw.commit() if self.dialect == "postgres" else self.raw.execute("COMMIT")

    def rollback(self) -> None:
        """Roll the transaction back (quietly, if none is open)."""
        try:
            if self.dialect == "postgres":
                self.raw.rollback()
            elif self.raw.in_transaction:
                self.raw.execute("ROLLBACK")
        except Exception:  # rolling back after a failure must not mask that failure
            pass

    def close(self) -> None:
        """Close the connection."""
        self.raw.close()


def connect(target: Target, *, read_only: bool = False) -> Connection | None:
    """Open the target; ``None`` for a SQLite file that does not exist and ``read_only``.

    A server that cannot be reached raises :class:`UnreachableTargetError` (exit 5) naming
    ``host:port`` and the masked DSN, never the password.
    """
    if target.dialect == "sqlite":
        return _connect_sqlite(target, read_only=read_only)
    return _connect_postgres(target)


def _connect_sqlite(target: Target, *, read_only: bool) -> Connection | None:
    path = target.location
    memory = path == ":memory:"
    if read_only and not memory and not os.path.exists(path):
        return None  # a dry run must not create the file
    if not memory and not Path(path).parent.is_dir():
        raise UnreachableTargetError(
            f"cannot open the SQLite file {path}: its directory does not exist"
        )
    try:
        if read_only and not memory:
            raw = sqlite3.connect(
                f"file:{quote(path)}?mode=ro", uri=True, isolation_level=None, timeout=5
            )
        else:
            raw = sqlite3.connect(path, isolation_level=None, timeout=5)
        raw.execute("SELECT 1")
    except sqlite3.Error as exc:
        raise UnreachableTargetError(f"cannot open the SQLite file {path}: {exc}") from None
    return Connection(raw, "sqlite")


def _connect_postgres(target: Target) -> Connection:
    try:
        import psycopg
    except ImportError:
        raise SqlMigrateError(
            "the sqlserver adapter needs psycopg",
            hint='pip install "django-toolkit[sqlserver]"',
        ) from None
    try:
        raw = psycopg.connect(target.dsn, connect_timeout=CONNECT_TIMEOUT, autocommit=False)
    except psycopg.Error as exc:
        from toolkit_batteries.core.redaction import redact_string

        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        reason = redact_string(lines[0] if lines else type(exc).__name__)
        reason = reason.replace(target.dsn, target.display)
        raise UnreachableTargetError(
            f"cannot reach PostgreSQL at {target.endpoint} ({target.display}): {reason}",
            hint="check that the server runs and that --dsn is right",
        ) from None
    return Connection(raw, "postgres")
