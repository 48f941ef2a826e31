"""The ``db`` adapter: a cache table in SQLite or PostgreSQL.

* ``dsn`` picks the database (a ``postgres://`` URL or libpq string, or a SQLite file
  path); an empty ``dsn`` borrows the container's ``db`` service, pool included.
* The table is created on open (``CREATE TABLE IF NOT EXISTS``, both dialects):
  ``toolkit_cache`` for the ``default`` instance, ``toolkit_cache_<instance>`` for
  others, columns ``cache_key`` (primary key), ``value`` (pickled bytes) and
  ``expires_at`` (Unix seconds, ``NULL`` for never), plus an index on ``expires_at``.
  The spec leaves the table name to code: subclass and set :attr:`DBCache.table`.
* Writes are one upsert (``INSERT ... ON CONFLICT (cache_key) DO UPDATE``) on both
  dialects; ``add`` is the same upsert guarded by "the old row has expired", so two
  concurrent ``add`` calls never both win.
* Expired rows are invisible to reads at once and deleted on open and then at most every
  ``sweep_interval`` (checked on writes). Time comes from :attr:`DBCache.clock`
  (``time.time``), which tests replace.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import OpenContext

from ..base import DEFAULT_TIMEOUT, Cache, ClosedResource
from ..sql import ensure_table, guard, open_database, table_name, valid_identifier

__all__ = ["DBCache"]

_PROTOCOL = pickle.HIGHEST_PROTOCOL
#: Keys per ``IN (...)`` list in get_many / delete_many.
_CHUNK = 500
_DEFAULT_PURGE = 60.0


def _chunks(items: list[Any], size: int = _CHUNK) -> Iterable[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class DBCache(Cache):
    """A cache stored in one SQL table."""

    adapter_name = "db"
    #: The table of the ``default`` instance; other instances append ``_<instance>``.
    table: ClassVar[str] = "toolkit_cache"

    def __init__(
        self,
        database: Any,
        params: Mapping[str, Any] | None = None,
        *,
        table: str | None = None,
        instance: str = "default",
        purge_interval: float = _DEFAULT_PURGE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Use ``database`` (a :class:`~toolkit_batteries.db.Database`, or a callable
        returning one) and the table ``table``, creating it if needed.
        """
        super().__init__(params, instance=instance)
        name = table or type(self).table
        if not valid_identifier(name):
            raise ValueError("the table name must be a lower-case SQL identifier")
        self.table_name = name
        self._database = database if callable(database) else (lambda: database)
        self._created: set[int] = set()
        self.clock = clock
        self.purge_interval = purge_interval if purge_interval > 0 else _DEFAULT_PURGE
        self._purge_at = 0.0
        t = name
        live = "(expires_at IS NULL OR expires_at > %s)"
        self._sql_get = f"SELECT value FROM {t} WHERE cache_key = %s AND {live}"
        self._sql_set = (
            f"INSERT INTO {t} (cache_key, value, expires_at) VALUES (%s, %s, %s) "
            "ON CONFLICT (cache_key) DO UPDATE SET value = excluded.value, "
            "expires_at = excluded.expires_at"
        )
        self._sql_add = (
            self._sql_set + f" WHERE {t}.expires_at IS NOT NULL AND {t}.expires_at <= %s"
        )
        self._sql_touch = f"UPDATE {t} SET expires_at = %s WHERE cache_key = %s AND {live}"
        self._sql_delete = f"DELETE FROM {t} WHERE cache_key = %s"
        self._sql_delete_live = (
            f"DELETE FROM {t} WHERE cache_key = %s AND (expires_at IS NULL OR expires_at > %s)"
        )
        self._sql_purge = f"DELETE FROM {t} WHERE expires_at IS NOT NULL AND expires_at <= %s"
        self._db()

    @classmethod
    def open(cls, ctx: OpenContext) -> DBCache:
        """Open (or borrow) the database, then create the instance's table and purge it."""
        database = open_database(ctx)
        interval = ctx.options.sweep_interval.total_seconds()
        cache = cls(
            database,
            table=table_name(cls.table, ctx.instance),
            instance=ctx.instance,
            purge_interval=interval,
        )
        cache.purge()
        if ctx.options.verbose:
            ctx.logger.info(
                "cache.%s: db table %s (%s)",
                ctx.instance,
                cache.table_name,
                database.dialect,
                extra={"service": "cache", "instance": ctx.instance},
            )
        return cache

    # ------------------------------------------------------------------ helpers

    def _db(self) -> Any:
        """Return the database, creating the table the first time it is seen."""
        database = self._database()
        if id(database) not in self._created:
            with guard(database, self.service_name, self.instance):
                ensure_table(database, self._ddl(database.dialect))
            self._created.add(id(database))
        return database

    def _ddl(self, dialect: str) -> list[str]:
        t = self.table_name
        blob, number = (
            ("bytea", "double precision") if dialect == "postgresql" else ("BLOB", "REAL")
        )
        return [
            f"CREATE TABLE IF NOT EXISTS {t} (cache_key text PRIMARY KEY, "
            f"value {blob} NOT NULL, expires_at {number})",
            f"CREATE INDEX IF NOT EXISTS {t}_expires_at ON {t} (expires_at)",
        ]

    def _expires_at(self, timeout: Any, now: float) -> float | None:
        lifetime = self.expiry_seconds(timeout)
        return None if lifetime is None else now + lifetime

    def _maybe_purge(self, database: Any, now: float) -> None:
        if now >= self._purge_at:
            self._purge_at = now + self.purge_interval
            database.execute(self._sql_purge, (now,))

    # ------------------------------------------------------------------ reads

    def get(self, key: str, default: Any = None, version: int | None = None) -> Any:
        """Return the live value of ``key``, or ``default``."""
        key = self.make_and_validate_key(key, version)
        database = self._db()
        with guard(database, self.service_name, self.instance):
            row = database.fetch_one(self._sql_get, (key, self.clock()))
        return default if row is None else pickle.loads(bytes(row[0]))

    def get_many(self, keys: Iterable[str], version: int | None = None) -> dict[str, Any]:
        """Return the live values of ``keys`` that exist."""
        made = {self.make_and_validate_key(key, version): key for key in keys}
        if not made:
            return {}
        database, now, found = self._db(), self.clock(), {}
        with guard(database, self.service_name, self.instance):
            for chunk in _chunks(list(made)):
                marks = ", ".join(["%s"] * len(chunk))
                rows = database.fetch_all(
                    f"SELECT cache_key, value FROM {self.table_name} WHERE cache_key IN ({marks}) "
                    "AND (expires_at IS NULL OR expires_at > %s)",
                    (*chunk, now),
                )
                for stored, value in rows:
                    found[made[stored]] = pickle.loads(bytes(value))
        return found

    def has_key(self, key: str, version: int | None = None) -> bool:
        """Tell whether ``key`` holds a live value."""
        key = self.make_and_validate_key(key, version)
        database = self._db()
        with guard(database, self.service_name, self.instance):
            return database.fetch_one(self._sql_get, (key, self.clock())) is not None

    # ------------------------------------------------------------------ writes

    def set(
        self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> None:
        """Store ``value`` under ``key`` for ``timeout`` seconds (one upsert)."""
        key = self.make_and_validate_key(key, version)
        payload = pickle.dumps(value, _PROTOCOL)
        database, now = self._db(), self.clock()
        expires = self._expires_at(timeout, now)
        with guard(database, self.service_name, self.instance):
            if expires is not None and expires <= now:
                database.execute(self._sql_delete, (key,))
            else:
                database.execute(self._sql_set, (key, payload, expires))
            self._maybe_purge(database, now)

    def add(
        self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        """Store ``value`` only if ``key`` holds no live value; tell whether it did."""
        key = self.make_and_validate_key(key, version)
        payload = pickle.dumps(value, _PROTOCOL)
        database, now = self._db(), self.clock()
        expires = self._expires_at(timeout, now)
        with guard(database, self.service_name, self.instance):
            if expires is not None and expires <= now:
                # Stored and expired at once, as Django does: report whether it was free.
                return database.fetch_one(self._sql_get, (key, now)) is None
            added = database.execute(self._sql_add, (key, payload, expires, now)) == 1
            self._maybe_purge(database, now)
        return added

    def set_many(
        self,
        data: Mapping[str, Any],
        timeout: Any = DEFAULT_TIMEOUT,
        version: int | None = None,
    ) -> list[str]:
        """Store every pair in one transaction; return the failed keys (always none)."""
        if not data:
            return []
        database, now = self._db(), self.clock()
        expires = self._expires_at(timeout, now)
        rows = [
            (self.make_and_validate_key(key, version), pickle.dumps(value, _PROTOCOL), expires)
            for key, value in data.items()
        ]
        with guard(database, self.service_name, self.instance):
            if expires is not None and expires <= now:
                database.execute_many(self._sql_delete, [(row[0],) for row in rows])
            else:
                database.execute_many(self._sql_set, rows)
        return []

    def touch(self, key: str, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        """Give a live ``key`` a new lifetime; tell whether it existed."""
        key = self.make_and_validate_key(key, version)
        database, now = self._db(), self.clock()
        expires = self._expires_at(timeout, now)
        with guard(database, self.service_name, self.instance):
            if expires is not None and expires <= now:
                with database.transaction() as tx:
                    live = tx.fetch_one(self._sql_get, (key, now)) is not None
                    tx.execute(self._sql_delete, (key,))
                return live
            return database.execute(self._sql_touch, (expires, key, now)) == 1

    def incr(self, key: str, delta: int = 1, version: int | None = None) -> Any:
        """Add ``delta`` in one transaction (row locked), keeping the expiry.

        Raise ``ValueError`` when the key holds no live value, as Django does.
        """
        made = self.make_and_validate_key(key, version)
        database, now = self._db(), self.clock()
        lock = " FOR UPDATE" if database.dialect == "postgresql" else ""
        with guard(database, self.service_name, self.instance), database.transaction() as tx:
            row = tx.fetch_one(
                f"SELECT value FROM {self.table_name} WHERE cache_key = %s "
                f"AND (expires_at IS NULL OR expires_at > %s){lock}",
                (made, now),
            )
            if row is None:
                raise ValueError(f"Key '{made}' not found")
            value = pickle.loads(bytes(row[0])) + delta
            tx.execute(
                f"UPDATE {self.table_name} SET value = %s WHERE cache_key = %s",
                (pickle.dumps(value, _PROTOCOL), made),
            )
        return value

    def delete(self, key: str, version: int | None = None) -> bool:
        """Remove ``key``; tell whether it held a live value."""
        key = self.make_and_validate_key(key, version)
        database, now = self._db(), self.clock()
        with guard(database, self.service_name, self.instance), database.transaction() as tx:
            live = tx.execute(self._sql_delete_live, (key, now)) == 1
            if not live:
                tx.execute(self._sql_delete, (key,))  # an expired row, if any
        return live

    def delete_many(self, keys: Iterable[str], version: int | None = None) -> None:
        """Remove every key in ``keys``."""
        made = [self.make_and_validate_key(key, version) for key in keys]
        database = self._db()
        with guard(database, self.service_name, self.instance):
            for chunk in _chunks(made):
                marks = ", ".join(["%s"] * len(chunk))
                database.execute(
                    f"DELETE FROM {self.table_name} WHERE cache_key IN ({marks})", tuple(chunk)
                )

    def clear(self) -> None:
        """Delete every row of this cache's table."""
        database = self._db()
        with guard(database, self.service_name, self.instance):
            database.execute(f"DELETE FROM {self.table_name}")

    def purge(self) -> int:
        """Delete the expired rows now; return how many were deleted."""
        database, now = self._db(), self.clock()
        with guard(database, self.service_name, self.instance):
            self._purge_at = now + self.purge_interval
            return max(0, database.execute(self._sql_purge, (now,)))

    # ------------------------------------------------------------------ lifecycle

    def close(self, **kwargs: Any) -> None:
        """Stop using the database; its pool belongs to the container's registry."""
        closed = ClosedResource(self.service_name, self.instance)
        self._database = closed
        self._created = set()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} cache.{self.instance} table {self.table_name}>"
