"""The db service: Django's own database connection, with one query API on both dialects.

``services.db()`` returns a :class:`Database` that wraps ``django.db.connections[alias]``:
Django opens, pools (``OPTIONS["pool"]`` on PostgreSQL), health-checks and closes the
connection, and holds one per thread. What this class adds is what must not differ between
PostgreSQL and SQLite for a battery that writes SQL:

* one placeholder style, ``%s``, on both (``%%`` is a literal percent sign);
* :meth:`Database.execute` and the ``fetch_*`` methods run on the calling thread's
  connection, so inside the caller's ``transaction.atomic()`` they are part of its
  transaction and commit or roll back with its rows;
* :meth:`Database.transaction` is ``transaction.atomic(using=alias)``: nested blocks are
  savepoints, a block that raises rolls back;
* errors are Django's (``django.db.IntegrityError``...), reachable as
  ``db.driver.IntegrityError`` for code written against the old pools::

    db = services.db()
    with db.transaction():
        db.execute("INSERT INTO notes (id, body) VALUES (%s, %s)", (1, "100%% sure"))
    db.fetch_value("SELECT count(*) FROM notes")   # 1

Battery tables are models with migrations (``manage.py migrate``); an adapter checks for
them with :func:`require_tables` at open and never runs DDL.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

from toolkit_batteries.core.adapter import ClosedResource, Service
from toolkit_batteries.core.errors import (
    ServiceUnavailableError,
    ToolkitError,
)
from toolkit_batteries.core.redaction import redact_string
from toolkit_batteries.core.transport import Unreachable, sql_unreachable

from .errors import MissingTablesError

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.db.models import Model

__all__ = [
    "Database",
    "InstanceRows",
    "MissingTablesError",
    "Transaction",
    "check_placeholders",
    "require_tables",
]


_PERCENT = re.compile(r"%(.?)", re.DOTALL)


@lru_cache(maxsize=512)
@lru_cache(maxsize=1024)
def check_placeholders(sql: str) -> str:
    """Return ``sql`` if its only ``%`` sequences are ``%s`` and ``%%``; else raise.

    Both dialects are checked the same way, so a query that works on SQLite in tests
    cannot fail on PostgreSQL in production because of its placeholders. Statements are
    nearly always constants, so the answer is cached per statement text.
    """
    for match in _PERCENT.finditer(sql):
        if match.group(1) not in ("s", "%"):
            raise ValueError(
                "unsupported placeholder: use %s for parameters and %% for a literal percent sign"
            )
    return sql


#: Types that are sequences (or look like parameters) but are not a parameter tuple.
_NOT_PARAMS = (Mapping, str, bytes)


def _check_params(params: Any) -> tuple[Any, ...]:
    if isinstance(params, _NOT_PARAMS):
        raise TypeError("params must be a sequence (tuple or list) matching the %s placeholders")
    return tuple(params)


#: psycopg's ``TransactionStatus.IDLE`` (no transaction open on the server).
_IDLE = 0
#: A ``prepare_threshold`` no statement reaches: only ``prepare=True`` prepares.
_ONLY_ASKED = 2**31 - 1

#: Tries of :meth:`Database.connect` while a new SQLite file is locked by its WAL switch.
_LOCKED_ATTEMPTS = 8


def _prepared_cursor(conn: BaseDatabaseWrapper) -> Any:
    """Return the thread's psycopg cursor for prepared statements; ``None`` off PostgreSQL.

    One cursor per Django connection (so per thread), kept on the wrapper and made again
    when the connection is: building a cursor per statement cost the queue's workers a
    tenth of their CPU (issue 27). Django opens its psycopg connections with
    ``prepare_threshold=None``, under which psycopg ignores ``prepare=True`` and sends
    every statement unnamed (parsed and planned again each time): a threshold no
    statement reaches makes ``prepare=True`` work while nothing else gets prepared
    (Django's own cursors never prepare).
    """
    if conn.vendor != "postgresql":
        return None
    raw = conn.connection
    if raw is None:  # what ensure_connection checks first, without its async guard's calls
        conn.ensure_connection()
        raw = conn.connection
    cursor = getattr(conn, "_toolkit_prepared", None)
    if cursor is None or cursor.connection is not raw:
        import psycopg

        if raw.prepare_threshold is None:
            raw.prepare_threshold = _ONLY_ASKED
        cursor = conn._toolkit_prepared = psycopg.Cursor(raw)  # type: ignore[attr-defined]
    return cursor


class _Queries:
    """The query methods, shared by the database and an open transaction."""

    alias: str
    #: Django's connection handler; a closed Database swaps in a ClosedResource.
    _handler: Any

    @property
    def django_connection(self) -> BaseDatabaseWrapper:
        """Return Django's connection for this alias, on the calling thread."""
        return self._handler[self.alias]

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement and return the number of rows it changed (-1 if unknown)."""
        with self.django_connection.cursor() as cursor:
            cursor.execute(check_placeholders(sql), _check_params(params))
            return cursor.rowcount

    def execute_many(self, sql: str, params_seq: Iterable[Sequence[Any]]) -> int:
        """Run one statement once per parameter tuple, in one transaction."""
        from django.db import transaction

        rows = [_check_params(params) for params in params_seq]
        with transaction.atomic(using=self.alias), self.django_connection.cursor() as cursor:
            cursor.executemany(check_placeholders(sql), rows)
            return cursor.rowcount

    def fetch_all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a query and return every row as a tuple."""
        with self.django_connection.cursor() as cursor:
            cursor.execute(check_placeholders(sql), _check_params(params))
            return [tuple(row) for row in cursor.fetchall()]

    def fetch_one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """Run a query and return its first row, or ``None`` when it returns none."""
        with self.django_connection.cursor() as cursor:
            cursor.execute(check_placeholders(sql), _check_params(params))
            row = cursor.fetchone()
            return None if row is None else tuple(row)

    def fetch_one_prepared(
        self,
        sql: str,
        params: Sequence[Any] = (),
        *,
        alone: bool = False,
        connection: BaseDatabaseWrapper | None = None,
    ) -> tuple[Any, ...] | None:
        """:meth:`fetch_one`, as a server-side prepared statement on PostgreSQL.

        For a hot path's statement (a queue pop, a workflow step's claim): Django binds
        parameters client-side and never prepares, so psycopg's ``prepare=True`` saves the
        quoting here and the parsing and planning in the server. Same connection (inside
        an ``atomic`` block it joins that transaction); errors are still Django's.

        ``alone``: when the ``atomic`` block's transaction has not begun on the server
        (no statement sent in it yet), run the statement as its own transaction instead:
        it commits by itself, durably, and the block's ``BEGIN`` and ``COMMIT`` round
        trips are never sent. Only for a caller that knows the statement is the last
        write of the outermost block (a workflow step's record). ``connection``: this
        alias's Django connection on this thread, when the caller already looked it up
        (each lookup goes through asgiref's context-local storage).
        """
        conn = connection or self.django_connection
        cursor = _prepared_cursor(conn)
        if cursor is None:
            return self.fetch_one(sql, params)
        raw = cursor.connection
        # libpq's status as an int: ``raw.info`` builds an object and an enum per read.
        solo = alone and not raw.autocommit and raw.pgconn.transaction_status == _IDLE
        with conn.wrap_database_errors:
            if solo:
                raw.autocommit = True  # no round trip while idle
            try:
                cursor.execute(sql, params, prepare=True)
                row = cursor.fetchone()
            finally:
                if solo and raw.pgconn.transaction_status == _IDLE:
                    raw.autocommit = False  # back under Django's atomic block
        return None if row is None else tuple(row)

    def execute_prepared(
        self,
        sql: str,
        params: Sequence[Any] = (),
        *,
        connection: BaseDatabaseWrapper | None = None,
    ) -> int:
        """:meth:`execute`, as a server-side prepared statement on PostgreSQL (as above)."""
        conn = connection or self.django_connection
        cursor = _prepared_cursor(conn)
        if cursor is None:
            return self.execute(sql, params)
        with conn.wrap_database_errors:
            cursor.execute(sql, params, prepare=True)
            return cursor.rowcount

    def fetch_all_with_settings(
        self, settings: Mapping[str, str], sql: str, params: Sequence[Any] = ()
    ) -> list[tuple[Any, ...]]:
        """Run a query with server ``settings`` in effect for that query alone (PostgreSQL).

        The settings go out as ``set_config(name, value, true)``, PostgreSQL's
        ``SET LOCAL``: they end with the transaction that runs the query. Outside an
        ``atomic`` block this is one round trip: psycopg's pipeline mode sends the
        settings statement and the (prepared) query with a single ``Sync``, and the
        server runs everything up to a ``Sync`` as one implicit transaction, so the
        settings hold for the query and are gone at its end. A ``BEGIN``/``COMMIT``
        block cost four round trips for the same (pgvector's per-query knobs, issue 27).
        Inside an ``atomic`` block, or where libpq has no pipeline mode, the two
        statements run in a savepoint of their own; the settings then last until the
        caller's transaction ends, as ``SET LOCAL`` does. ``settings`` names come from
        code, never from a request; values are bound parameters.
        """
        from django.db import transaction

        names = list(settings)
        tune = "SELECT " + ", ".join(f"set_config('{name}', %s, true)" for name in names)
        values = [str(settings[name]) for name in names]
        conn = self.django_connection
        cursor = _prepared_cursor(conn)
        if cursor is not None:
            import psycopg

            raw = cursor.connection
            if raw.autocommit and psycopg.Pipeline.is_supported():
                try:
                    with conn.wrap_database_errors:
                        with raw.pipeline():  # its exit sends the one Sync, then reads
                            cursor.execute(tune, values, prepare=True)
                            cursor.execute(sql, tuple(params), prepare=True)
                        return [tuple(row) for row in cursor.fetchall()]
                except Exception:
                    # After an error the server skips the rest of the pipeline, a Parse
                    # included, which psycopg may have counted as prepared: start over.
                    with contextlib.suppress(Exception):
                        cursor.execute("DEALLOCATE ALL")
                    raise
        with transaction.atomic(using=self.alias):
            self.execute(tune, values)
            return self.fetch_all(sql, params)

    def fetch_value(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run a query and return the first column of its first row, or ``None``."""
        row = self.fetch_one(sql, params)
        return None if row is None else row[0]


class Transaction(_Queries):
    """An open ``transaction.atomic`` block: the query methods, on its connection."""

    def __init__(self, database: Database, depth: int) -> None:
        self.database = database
        self.alias = database.alias
        self._handler = database._handler
        self.dialect = database.dialect
        #: 1 for the outermost transaction, 2 and more for savepoints.
        self.depth = depth

    @property
    def connection(self) -> Any:
        """Return the DB-API connection the transaction runs on."""
        conn = self.django_connection
        conn.ensure_connection()
        return conn.connection


class Database(Service, _Queries):
    """A SQL database: Django's connection ``alias``, with the toolkit's query API."""

    service_name: ClassVar[str] = "db"

    def __init__(self, alias: str, *, instance: str = "default", scratch: str = "") -> None:
        """Use Django's connection ``alias``.

        ``scratch`` is a private SQLite file standing in for ``:memory:``, deleted by
        :meth:`close`: Django opens one connection per thread, and every plain
        ``:memory:`` connection would be a different, empty database.
        """
        from django.db import connections

        self.alias = alias
        self.instance = instance
        self._handler = connections
        self._scratch = scratch

    # ------------------------------------------------------------------ identity

    @property
    def dialect(self) -> str:
        """Return ``"postgresql"`` or ``"sqlite"``."""
        vendor = self.django_connection.vendor
        return "postgresql" if vendor == "postgresql" else vendor

    @property
    def target(self) -> str:
        """Return what the alias points at, display-safe: a redacted URL, or the file."""
        entry = self.django_connection.settings_dict
        if self.django_connection.vendor == "sqlite":
            return str(entry.get("NAME", ""))
        user = entry.get("USER") or ""
        secret = ":x" if entry.get("PASSWORD") else ""
        where = f"{entry.get('HOST') or 'localhost'}:{entry.get('PORT') or '5432'}"
        login = f"{user}{secret}@" if user else ""
        return redact_string(f"postgresql://{login}{where}/{entry.get('NAME', '')}")

    @property
    def driver(self) -> ModuleType:
        """Return the module of the errors queries raise (``django.db``: ``IntegrityError``...)."""
        import django.db

        return django.db

    # ------------------------------------------------------------------ connections

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """Lend the thread's DB-API connection; a block that raises rolls back its work.

        Outside a transaction the block runs in one ``transaction.atomic`` (commit on a
        clean exit); inside one, it joins it. Its parameter style is the driver's own
        (``?`` on SQLite); the query methods translate ``%s`` for you.
        """
        from django.db import transaction

        with transaction.atomic(using=self.alias):
            conn = self.django_connection
            conn.ensure_connection()
            yield conn.connection

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """Run a block in ``transaction.atomic(using=alias)``: commit, or roll back on error.

        The block joins a transaction the caller already opened on this alias (a nested
        block is a savepoint, so an inner failure rolls back only the inner block).
        """
        from django.db import transaction

        conn = self.django_connection
        depth = len(conn.savepoint_ids) + 2 if conn.in_atomic_block else 1
        with transaction.atomic(using=self.alias):
            yield Transaction(self, depth)

    # ------------------------------------------------------------------ health

    def connect(self, service: str = "") -> None:
        """Open the thread's connection now; raise ServiceUnavailableError if it fails.

        ``service`` names the battery that asked (``queue``), default this db service.
        """
        for attempt in range(_LOCKED_ATTEMPTS):
            try:
                self.django_connection.ensure_connection()
                return
            except ToolkitError:
                raise
            except Exception as exc:
                # A fresh SQLite file switching to WAL needs a moment of exclusive access:
                # processes opening it at once get "database is locked" from the PRAGMA
                # (SQLite's busy timeout does not cover it), so wait briefly and retry.
                if "locked" in str(exc) and attempt + 1 < _LOCKED_ATTEMPTS:
                    self.django_connection.close()
                    time.sleep(0.05 * (attempt + 1))
                    continue
                from .failures import describe_failure

                raise ServiceUnavailableError(
                    service or self.service_name, describe_failure(exc), instance=self.instance
                ) from None

    def unavailable(
        self, service: str, instance: str, doing: str = "use the database"
    ) -> Unreachable:
        """Turn "cannot use the database now" into ServiceUnavailableError naming the battery.

        Django's ``OperationalError`` and ``InterfaceError`` (server gone, connection
        refused, database locked past its timeout) become
        ``ServiceUnavailableError(service, "cannot <doing> (<error class>)")``: the
        driver's message names hosts and users, so only its class is kept. Every SQL
        battery wraps its statements in this block; it also drops a dead connection so
        the next call reconnects (:meth:`drop_if_broken`). The translation itself is the
        SQL transport's, :func:`toolkit_batteries.core.transport.sql_unreachable`.
        """
        return sql_unreachable(service, instance, doing, on_error=self.drop_if_broken)

    def drop_if_broken(self, *, probe: bool = False) -> None:
        """Drop this thread's connection if it is dead, so the next statement opens a new one.

        Django recycles a broken connection only at the start and end of a request; a
        worker or a scheduler has no requests, so after the database restarts every later
        call would fail on the dead connection. Called after a failed statement (Django
        then knows an error occurred) and, with ``probe``, before reusing a connection
        kept from earlier (one round trip). Inside the caller's transaction the
        connection is left alone: the transaction has failed and the caller's ``atomic``
        block deals with it.
        """
        try:
            conn = self.django_connection
            if conn.connection is None or conn.in_atomic_block:
                return
            if probe:
                if not conn.is_usable():
                    conn.close()
            else:
                conn.close_if_unusable_or_obsolete()
        except Exception:  # a best effort: the caller reports the original failure
            return

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
        """End this object; close the thread's connection of a derived alias.

        Aliases the project configured (``default``) belong to Django and stay open for
        everyone else; a derived alias's connections in other threads close with their
        threads. Using this object afterwards raises ServiceUnavailableError.
        """
        from django.db import connections

        self._handler = ClosedResource(self.service_name, self.instance)
        if self.alias.startswith("toolkit_"):
            for conn in connections.all(initialized_only=True):
                if conn.alias == self.alias:
                    conn.close()
        scratch, self._scratch = self._scratch, ""
        for path in (scratch, f"{scratch}-wal", f"{scratch}-shm") if scratch else ():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)

    # The container calls close() on this thread: Django connections are thread-bound.
    close_in_caller_thread: ClassVar[bool] = True

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.service_name}.{self.instance} alias {self.alias}>"


class InstanceRows:
    """Mixed into a SQL adapter whose instances share one table (a column ``instance``).

    Every such adapter needs the same two things: its own instance's rows on its
    database's alias, and a block that turns "cannot use the database now" into
    ``ServiceUnavailableError`` naming its battery. Written here once so the scoping (one
    instance never sees another's rows) and the translation cannot differ between them.
    The adapter sets ``database`` and ``_model``; ``service_name`` and ``instance`` are
    its :class:`~toolkit_batteries.core.adapter.Service`'s.
    """

    database: Database
    _model: Any
    service_name: ClassVar[str]
    instance: str

    @property
    def _rows(self) -> Any:
        """Return this instance's rows, on this adapter's database alias."""
        return self._model.objects.using(self.database.alias).filter(instance=self.instance)

    def _guarded(self, action: Callable[[], Any]) -> Any:
        """Run ``action``; "cannot use the database now" raises ServiceUnavailableError."""
        with self.database.unavailable(self.service_name, self.instance):
            return action()


def require_tables(
    database: Database, *models: type[Model], service: str, instance: str = "default"
) -> None:
    """Raise :class:`MissingTablesError` unless every model's table exists in ``database``.

    Battery adapters call this at open instead of creating tables: their tables come from
    migrations (``manage.py migrate``), so a missing one is a deployment step left out,
    named with the command that fixes it.
    """
    try:
        existing = set(database.django_connection.introspection.table_names())
    except Exception as exc:
        raise ServiceUnavailableError(
            service, f"cannot read the database's tables ({type(exc).__name__})", instance=instance
        ) from None
    missing = [m._meta.db_table for m in models if m._meta.db_table not in existing]
    if missing:
        raise MissingTablesError(service, instance, database.alias, missing)
