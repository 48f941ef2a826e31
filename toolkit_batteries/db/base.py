"""The db service: a SQL connection pool with one query API on PostgreSQL and SQLite.

Every adapter hands a pool from the container's registry to :class:`Database`, which
does everything that must not differ between dialects:

* one placeholder style, ``%s``, on both (``%%`` is a literal percent sign); SQLite
  receives ``?``;
* :meth:`Database.execute` and the ``fetch_*`` methods each borrow a connection and
  commit when done, unless they run inside :meth:`Database.transaction`, which they then
  join;
* :meth:`Database.transaction` commits on a clean exit and rolls back when the block
  raises; nested blocks are savepoints;
* :meth:`Database.close` does nothing: the registry owns the pool, which other services
  may be borrowing::

    db = services.db()
    db.execute("CREATE TABLE IF NOT EXISTS notes (id integer PRIMARY KEY, body text)")
    with db.transaction():
        db.execute("INSERT INTO notes (id, body) VALUES (%s, %s)", (1, "100%% sure"))
    db.fetch_value("SELECT count(*) FROM notes")   # 1
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import ServiceUnavailableError, ToolkitError
from toolkit_batteries.core.pools import SQLPool, SQLPoolSettings

__all__ = ["Database", "Transaction", "pool_settings", "translate_placeholders"]

_PERCENT = re.compile(r"%(.?)", re.DOTALL)
_QMARK = {"s": "?", "%": "%"}
_FORMAT = {"s": "%s", "%": "%%"}


@lru_cache(maxsize=512)
def translate_placeholders(sql: str, dialect: str) -> str:
    """Rewrite ``%s``/``%%`` for ``dialect``; reject every other ``%`` sequence.

    Both dialects are checked the same way, so a query that works on SQLite in tests
    cannot fail on PostgreSQL in production because of its placeholders.
    """
    table = _QMARK if dialect == "sqlite" else _FORMAT

    def swap(match: re.Match[str]) -> str:
        replacement = table.get(match.group(1))
        if replacement is None:
            raise ValueError(
                "unsupported placeholder: use %s for parameters and %% for a literal percent sign"
            )
        return replacement

    return _PERCENT.sub(swap, sql)


def pool_settings(options: Any) -> SQLPoolSettings:
    """Return the pool settings carried by a service's options (missing fields are 0)."""
    settings = SQLPoolSettings()
    return SQLPoolSettings(
        max_conns=int(getattr(options, "max_conns", 0) or 0),
        min_conns=int(getattr(options, "min_conns", 0) or 0),
        max_conn_lifetime=getattr(options, "max_conn_lifetime", None) or settings.max_conn_lifetime,
        max_conn_idle_time=getattr(options, "max_conn_idle_time", None)
        or settings.max_conn_idle_time,
    )


def _check_params(params: Any) -> Sequence[Any]:
    if isinstance(params, Mapping | str | bytes):
        raise TypeError("params must be a sequence (tuple or list) matching the %s placeholders")
    return tuple(params)


class _Queries:
    """The query methods, shared by the database and an open transaction."""

    dialect: str

    def _borrow(self) -> Any:  # pragma: no cover - both subclasses override
        raise NotImplementedError

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement and return the number of rows it changed (-1 if unknown)."""
        with self._borrow() as conn:
            cursor = conn.cursor()
            try:
                cursor.execute(translate_placeholders(sql, self.dialect), _check_params(params))
                return cursor.rowcount
            finally:
                cursor.close()

    def execute_many(self, sql: str, params_seq: Iterable[Sequence[Any]]) -> int:
        """Run one statement once per parameter tuple, in one transaction."""
        with self._borrow() as conn:
            cursor = conn.cursor()
            try:
                cursor.executemany(
                    translate_placeholders(sql, self.dialect),
                    [_check_params(params) for params in params_seq],
                )
                return cursor.rowcount
            finally:
                cursor.close()

    def fetch_all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a query and return every row as a tuple."""
        with self._borrow() as conn:
            cursor = conn.cursor()
            try:
                cursor.execute(translate_placeholders(sql, self.dialect), _check_params(params))
                return [tuple(row) for row in cursor.fetchall()]
            finally:
                cursor.close()

    def fetch_one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """Run a query and return its first row, or ``None`` when it returns none."""
        with self._borrow() as conn:
            cursor = conn.cursor()
            try:
                cursor.execute(translate_placeholders(sql, self.dialect), _check_params(params))
                row = cursor.fetchone()
                return None if row is None else tuple(row)
            finally:
                cursor.close()

    def fetch_value(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run a query and return the first column of its first row, or ``None``."""
        row = self.fetch_one(sql, params)
        return None if row is None else row[0]


class Transaction(_Queries):
    """An open transaction: the query methods, on the one connection it holds."""

    def __init__(self, database: Database, connection: Any, depth: int) -> None:
        self.database = database
        #: The DB-API connection the transaction runs on.
        self.connection = connection
        #: 1 for the outermost transaction, 2 and more for savepoints.
        self.depth = depth
        self.dialect = database.dialect

    @contextmanager
    def _borrow(self) -> Iterator[Any]:
        yield self.connection


class Database(Service, _Queries):
    """A SQL database reached through a shared pool.

    Adapters only implement :meth:`open`; this class holds the pool and the query API.
    """

    service_name: ClassVar[str] = "db"

    def __init__(self, pool: SQLPool, *, instance: str = "default") -> None:
        self.pool = pool
        self.instance = instance
        self._savepoints = itertools.count(1)
        self._current: ContextVar[Transaction | None] = ContextVar(
            f"toolkit_db_transaction_{id(self)}", default=None
        )

    # ------------------------------------------------------------------ identity

    @property
    def dialect(self) -> str:  # type: ignore[override]
        """Return ``"postgresql"`` or ``"sqlite"``."""
        return self.pool.dialect

    @property
    def target(self) -> str:
        """Return what the pool points at, display-safe (no password)."""
        target = getattr(self.pool, "target", None)
        return target.describe() if target is not None else ""

    @property
    def driver(self) -> Any:
        """Return the DB-API module, for its exceptions (``db.driver.IntegrityError``)."""
        return self.pool.driver  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ connections

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """Lend a DB-API connection; inside :meth:`transaction`, lend its connection.

        A borrowed connection commits on a clean exit and rolls back when the block
        raises. Its parameter style is the driver's own (``?`` on SQLite); the query
        methods translate ``%s`` for you.
        """
        current = self._current.get()
        if current is not None:
            yield current.connection
            return
        with self.pool.connection() as conn:
            yield conn

    _borrow = connection

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """Run a block in one transaction: commit on a clean exit, roll back on an error.

        The query methods of the database join the transaction while the block runs in
        this thread (or task); a nested ``transaction()`` is a savepoint, so an inner
        failure rolls back only the inner block.
        """
        current = self._current.get()
        if current is not None:
            with self._savepoint(current.connection):
                tx = Transaction(self, current.connection, current.depth + 1)
                token = self._current.set(tx)
                try:
                    yield tx
                finally:
                    self._current.reset(token)
            return
        with self.pool.connection() as conn:
            if getattr(conn, "in_transaction", False):
                # A connection() block already holds this (in-memory) connection.
                with self._savepoint(conn):
                    tx = Transaction(self, conn, 2)
                    token = self._current.set(tx)
                    try:
                        yield tx
                    finally:
                        self._current.reset(token)
                return
            if self.dialect == "sqlite":
                # Take the write lock now: a deferred transaction that later writes can
                # fail with SQLITE_BUSY under WAL instead of waiting.
                conn.execute("BEGIN IMMEDIATE")
            tx = Transaction(self, conn, 1)
            token = self._current.set(tx)
            try:
                yield tx
            except BaseException:
                conn.rollback()
                raise
            else:
                conn.commit()
            finally:
                self._current.reset(token)

    @contextmanager
    def _savepoint(self, conn: Any) -> Iterator[None]:
        name = f"toolkit_sp_{next(self._savepoints)}"
        cursor = conn.cursor()
        try:
            cursor.execute(f"SAVEPOINT {name}")
            try:
                yield
            except BaseException:
                cursor.execute(f"ROLLBACK TO SAVEPOINT {name}")
                cursor.execute(f"RELEASE SAVEPOINT {name}")
                raise
            else:
                cursor.execute(f"RELEASE SAVEPOINT {name}")
        finally:
            cursor.close()

    # ------------------------------------------------------------------ health

    def ping(self) -> None:
        """Check that the database answers ``SELECT 1``; raise ServiceUnavailableError."""
        try:
            value = self.fetch_value("SELECT 1")
        except ToolkitError:
            raise
        except Exception as exc:
            raise ServiceUnavailableError(
                self.service_name,
                f"the database did not answer ({type(exc).__name__})",
                instance=self.instance,
            ) from None
        if value != 1:
            raise ServiceUnavailableError(
                self.service_name, "the database answered unexpectedly", instance=self.instance
            )

    def close(self) -> None:
        """Do nothing: the container's registry owns the pool and closes it last."""

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} {self.service_name}.{self.instance} "
            f"{self.dialect} {self.target}>"
        )
