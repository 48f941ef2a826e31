"""The ``db`` adapter: idempotency records in a SQLite or PostgreSQL table.

* ``dsn`` picks the database; an empty ``dsn`` borrows the container's ``db`` service.
* The table is created on open: ``toolkit_idempotency`` for the ``default`` instance,
  ``toolkit_idempotency_<instance>`` otherwise (subclass and set
  :attr:`DBIdempotency.table` to rename it), with columns ``idem_key`` (primary key),
  ``state``, ``token``, ``fingerprint``, ``response`` and ``expires_at`` (Unix seconds).
* Reserving is one ``INSERT ... ON CONFLICT (idem_key) DO UPDATE ... WHERE <the old
  record expired>``: the primary key makes it atomic on both dialects, so among any
  number of processes exactly one inserts (or takes over an expired record).
* Expired records are invisible at once and deleted on open and then at most once a
  minute (checked on reserve). Time comes from :attr:`DBIdempotency.clock`
  (``time.time``), which tests replace.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar

from toolkit_batteries.cache.sql import (
    ensure_table,
    guard,
    open_database,
    table_name,
    valid_identifier,
)
from toolkit_batteries.core.adapter import ClosedResource, OpenContext

from ..base import DEFAULT_TTL, Idempotency, ReservationState

__all__ = ["DBIdempotency"]

_Found = tuple[ReservationState, str, bytes | None]
#: Seconds between purges of expired records.
PURGE_INTERVAL = 60.0
#: Attempts to read a record that vanished between the insert and the read.
_ATTEMPTS = 5


class DBIdempotency(Idempotency):
    """Idempotency records in one SQL table."""

    adapter_name = "db"
    #: The table of the ``default`` instance; other instances append ``_<instance>``.
    table: ClassVar[str] = "toolkit_idempotency"

    def __init__(
        self,
        database: Any,
        *,
        table: str | None = None,
        ttl: float = DEFAULT_TTL,
        instance: str = "default",
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Use ``database`` (a :class:`~toolkit_batteries.db.Database`) and create the table."""
        super().__init__(ttl=ttl, instance=instance)
        name = table or type(self).table
        if not valid_identifier(name):
            raise ValueError("the table name must be a lower-case SQL identifier")
        self.table_name = name
        self._database = database
        #: The time records expire by (Unix seconds, shared by every process).
        self.clock = clock
        self._purge_at = 0.0
        t, live = name, "expires_at > %s"
        self._sql_reserve = (
            f"INSERT INTO {t} (idem_key, state, token, fingerprint, response, expires_at) "
            "VALUES (%s, 'in_progress', %s, %s, NULL, %s) "
            "ON CONFLICT (idem_key) DO UPDATE SET state = 'in_progress', "
            "token = excluded.token, fingerprint = excluded.fingerprint, response = NULL, "
            f"expires_at = excluded.expires_at WHERE {t}.expires_at <= %s"
        )
        self._sql_get = (
            f"SELECT state, fingerprint, response FROM {t} WHERE idem_key = %s AND {live}"
        )
        self._sql_commit = (
            f"UPDATE {t} SET state = 'completed', response = %s, expires_at = %s "
            f"WHERE idem_key = %s AND state = 'in_progress' AND {live}"
        )
        self._sql_release = (
            f"DELETE FROM {t} WHERE idem_key = %s AND state = 'in_progress' AND {live}"
        )
        self._sql_purge = f"DELETE FROM {t} WHERE expires_at <= %s"
        blob, number = (
            ("bytea", "double precision") if database.dialect == "postgresql" else ("BLOB", "REAL")
        )
        with guard(database, self.service_name, instance):
            ensure_table(
                database,
                [
                    f"CREATE TABLE IF NOT EXISTS {t} (idem_key text PRIMARY KEY, "
                    "state text NOT NULL, token text NOT NULL, fingerprint text NOT NULL, "
                    f"response {blob}, expires_at {number} NOT NULL)",
                    f"CREATE INDEX IF NOT EXISTS {t}_expires_at ON {t} (expires_at)",
                ],
            )

    @classmethod
    def open(cls, ctx: OpenContext) -> DBIdempotency:
        """Open (or borrow) the database, create the instance's table and purge it."""
        store = cls(
            open_database(ctx),
            table=table_name(cls.table, ctx.instance),
            ttl=ctx.options.ttl.total_seconds(),
            instance=ctx.instance,
        )
        store.purge()
        return store

    # ------------------------------------------------------------------ primitives

    def _reserve(self, key: str, token: str, fingerprint: str, ttl: float) -> _Found | None:
        database = self._database
        with guard(database, self.service_name, self.instance):
            for _ in range(_ATTEMPTS):
                now = self.clock()
                if now >= self._purge_at:
                    self.purge()
                inserted = database.execute(
                    self._sql_reserve, (key, token, fingerprint, now + ttl, now)
                )
                if inserted == 1:
                    return None
                row = database.fetch_one(self._sql_get, (key, now))
                if row is not None:
                    return _found(row)
            # Released and re-reserved under our feet every time: report it as taken (by
            # this same request, so a caller comparing fingerprints answers "in progress").
            return ReservationState.IN_PROGRESS, fingerprint, None

    def _commit(self, key: str, payload: bytes, ttl: float, token: str) -> bool:
        database, now = self._database, self.clock()
        sql, params = self._sql_commit, [payload, now + ttl, key, now]
        if token:
            sql, params = sql + " AND token = %s", [*params, token]
        with guard(database, self.service_name, self.instance):
            return database.execute(sql, params) == 1

    def _release(self, key: str, token: str) -> bool:
        database, now = self._database, self.clock()
        sql, params = self._sql_release, [key, now]
        if token:
            sql, params = sql + " AND token = %s", [*params, token]
        with guard(database, self.service_name, self.instance):
            return database.execute(sql, params) == 1

    def _get(self, key: str) -> _Found | None:
        database = self._database
        with guard(database, self.service_name, self.instance):
            row = database.fetch_one(self._sql_get, (key, self.clock()))
        return None if row is None else _found(row)

    def _delete(self, key: str) -> bool:
        database, now = self._database, self.clock()
        with guard(database, self.service_name, self.instance), database.transaction() as tx:
            live = tx.fetch_one(self._sql_get, (key, now)) is not None
            tx.execute(f"DELETE FROM {self.table_name} WHERE idem_key = %s", (key,))
        return live

    def purge(self) -> int:
        """Delete expired records now; return how many were deleted."""
        database, now = self._database, self.clock()
        self._purge_at = now + PURGE_INTERVAL
        with guard(database, self.service_name, self.instance):
            return max(0, database.execute(self._sql_purge, (now,)))

    def close(self) -> None:
        """Stop using the database; its pool belongs to the container's registry."""
        self._database = ClosedResource(self.service_name, self.instance)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} idempotency.{self.instance} table {self.table_name}>"


def _found(row: tuple[Any, ...]) -> _Found:
    state, fingerprint, payload = row
    return ReservationState(state), fingerprint or "", None if payload is None else bytes(payload)
