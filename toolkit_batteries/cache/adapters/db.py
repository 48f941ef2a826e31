"""The ``db`` adapter: cache entries in the ``toolkit_cache_entry`` table (SQLite or PostgreSQL).

* ``CACHES`` entry: ``LOCATION`` is the cache's name, the rows' ``namespace``; ``OPTIONS``
  names the database: ``database`` (a ``DATABASES`` alias; what ``django_cache_settings``
  writes for an empty ``dsn``: the ``db`` service's alias), else ``dsn`` (reached through
  the ``DATABASES`` alias of that database, registered at run time when settings have
  none; ``dedicated_pool`` gives it an alias of its own), else ``default``.
* The table is a model with a migration (:class:`~toolkit_batteries.cache.models.CacheEntry`):
  ``manage.py migrate --database <alias>`` creates it; nothing runs DDL. The container's
  open checks it exists and raises :class:`~toolkit_batteries.db.MissingTablesError`
  naming the command otherwise.
* Statements run on Django's connection of that alias, on the calling thread, so a cache
  write inside the caller's ``transaction.atomic()`` commits or rolls back with it.
* Writes are one upsert (``INSERT ... ON CONFLICT (namespace, cache_key) DO UPDATE``) on
  both dialects; ``add`` is the same upsert guarded by "the old row has expired", so two
  concurrent ``add`` calls never both win.
* Values go through the ``serializer`` (pickle by default; see :mod:`..serializers`).
* Expired rows are invisible to reads at once and deleted on the container's open and
  then at most every ``sweep_interval`` (checked on writes). Time comes from
  :attr:`DBCache.clock` (``time.time``), which tests replace.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.tracing import traced

from ..base import DEFAULT_TIMEOUT, REMOTE_OPERATIONS, Cache, decode_options
from ..serializers import REFUSED, serializer_for

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext
    from toolkit_batteries.db import Database

__all__ = ["TABLE", "DBCache"]

#: The table every db cache writes to (namespaced by LOCATION).
TABLE = "toolkit_cache_entry"
#: Keys per ``IN (...)`` list in get_many / delete_many.
_CHUNK = 500
_DEFAULT_PURGE = 60.0
_LIVE = "(expires_at IS NULL OR expires_at > %s)"
_T = TABLE
_SQL_GET = f"SELECT value FROM {_T} WHERE namespace = %s AND cache_key = %s AND {_LIVE}"
_SQL_SET = (
    f"INSERT INTO {_T} (namespace, cache_key, value, expires_at) VALUES (%s, %s, %s, %s) "
    "ON CONFLICT (namespace, cache_key) DO UPDATE SET value = excluded.value, "
    "expires_at = excluded.expires_at"
)
_SQL_ADD = _SQL_SET + f" WHERE {_T}.expires_at IS NOT NULL AND {_T}.expires_at <= %s"
_SQL_TOUCH = f"UPDATE {_T} SET expires_at = %s WHERE namespace = %s AND cache_key = %s AND {_LIVE}"
_SQL_DELETE = f"DELETE FROM {_T} WHERE namespace = %s AND cache_key = %s"
_SQL_DELETE_LIVE = _SQL_DELETE + f" AND {_LIVE}"
_SQL_PURGE = (
    f"DELETE FROM {_T} WHERE namespace = %s AND expires_at IS NOT NULL AND expires_at <= %s"
)
_SQL_CLEAR = f"DELETE FROM {_T} WHERE namespace = %s"
_SQL_UPDATE = f"UPDATE {_T} SET value = %s WHERE namespace = %s AND cache_key = %s"


def _chunks(items: list[Any], size: int = _CHUNK) -> Iterable[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@traced(*REMOTE_OPERATIONS)
class DBCache(Cache):
    """A cache stored in the ``toolkit_cache_entry`` table, one namespace per cache."""

    adapter_name = "db"

    def __init__(self, location: Any, params: Mapping[str, Any]) -> None:
        """Read the options; the database is found on first use (no I/O here)."""
        super().__init__(location, params)
        options, extra = decode_options(params, self.instance, extra=("database",))
        self._alias = str(extra.get("database", "") or "").strip()
        self._dsn = str(options.dsn or "").strip()
        self._options = options
        self._database: Database | None = None
        self._serializer = serializer_for(options, instance=self.instance)
        interval = options.sweep_interval.total_seconds()
        self.purge_interval = interval if interval > 0 else _DEFAULT_PURGE
        self._purge_at = 0.0
        self.clock = time.time

    @classmethod
    def prepare(cls, ctx: OpenContext) -> dict[str, Any]:
        """Find the database (own ``dsn``, else the ``db`` service) and check its table."""
        from toolkit_batteries.db import database_for, require_tables

        from ..models import CacheEntry

        database = database_for(ctx)
        require_tables(database, CacheEntry, service=ctx.service, instance=ctx.instance)
        return {"database": database.alias}

    @classmethod
    def opened(cls, cache: Cache, ctx: OpenContext) -> None:
        """Purge the rows that expired while nothing was running."""
        if isinstance(cache, DBCache):
            cache.purge()

    # ------------------------------------------------------------------ helpers

    @property
    def table_name(self) -> str:
        """Return the table the entries live in (shared by every db cache)."""
        return TABLE

    def _db(self) -> Database:
        """Return the :class:`~toolkit_batteries.db.Database` this cache writes to."""
        database = self._database
        if database is None:
            database = self._database = self._resolve()
        return database

    def _resolve(self) -> Database:
        from toolkit_batteries.db import Database

        alias = self._alias
        if not alias and self._dsn:
            from django.db import connections

            from toolkit_batteries.core.slots import slot_alias
            from toolkit_batteries.db.connections import ALIAS_PREFIX
            from toolkit_batteries.db.databases import dsn_entry

            entry = dsn_entry(self._dsn, self._options, service="cache", instance=self.instance)
            if self._options.dedicated_pool:
                entry = {**entry, "TOOLKIT_DEDICATED": f"cache.{self.instance}"}
            alias = slot_alias(connections, entry, preferred="default", prefix=ALIAS_PREFIX)
        database = Database(alias or "default", instance=self.instance)
        database.service_name = "cache"  # errors name the cache, not the db service
        return database

    def _expires_at(self, timeout: Any, now: float) -> float | None:
        lifetime = self.expiry_seconds(timeout)
        return None if lifetime is None else now + lifetime

    def _maybe_purge(self, database: Database, now: float) -> None:
        if now >= self._purge_at:
            self._purge_at = now + self.purge_interval
            database.execute(_SQL_PURGE, (self.instance, now))

    def _load(self, raw: Any) -> Any:
        return self._serializer.loads(bytes(raw))

    # ------------------------------------------------------------------ reads

    def get(self, key: str, default: Any = None, version: int | None = None) -> Any:
        """Return the live value of ``key``, or ``default``."""
        key = self.make_and_validate_key(key, version)
        database = self._db()
        with database.unavailable(self.service_name, self.instance):
            row = database.fetch_one(_SQL_GET, (self.instance, key, self.clock()))
        if row is None:
            return default
        value = self._load(row[0])
        return default if value is REFUSED else value

    def get_many(self, keys: Iterable[str], version: int | None = None) -> dict[str, Any]:
        """Return the live values of ``keys`` that exist."""
        made = {self.make_and_validate_key(key, version): key for key in keys}
        if not made:
            return {}
        database, now, found = self._db(), self.clock(), {}
        with database.unavailable(self.service_name, self.instance):
            for chunk in _chunks(list(made)):
                marks = ", ".join(["%s"] * len(chunk))
                rows = database.fetch_all(
                    f"SELECT cache_key, value FROM {_T} WHERE namespace = %s "
                    f"AND cache_key IN ({marks}) AND {_LIVE}",
                    (self.instance, *chunk, now),
                )
                for stored, raw in rows:
                    value = self._load(raw)
                    if value is not REFUSED:
                        found[made[stored]] = value
        return found

    def has_key(self, key: str, version: int | None = None) -> bool:
        """Tell whether ``key`` holds a live value."""
        key = self.make_and_validate_key(key, version)
        database = self._db()
        with database.unavailable(self.service_name, self.instance):
            return database.fetch_one(_SQL_GET, (self.instance, key, self.clock())) is not None

    # ------------------------------------------------------------------ writes

    def _write(
        self, key: str, value: Any, timeout: Any, version: int | None
    ) -> tuple[str, Any, Database, float, float | None]:
        """Return what ``set`` and ``add`` both start from: the checked key, the encoded
        value, the database, now, and the expiry time (``None``: never)."""
        key = self.make_and_validate_key(key, version)
        payload = self._serializer.dumps(value)
        database, now = self._db(), self.clock()
        return key, payload, database, now, self._expires_at(timeout, now)

    def set(
        self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> None:
        """Store ``value`` under ``key`` for ``timeout`` seconds (one upsert)."""
        key, payload, database, now, expires = self._write(key, value, timeout, version)
        with database.unavailable(self.service_name, self.instance):
            if expires is not None and expires <= now:
                database.execute(_SQL_DELETE, (self.instance, key))
            else:
                database.execute(_SQL_SET, (self.instance, key, payload, expires))
            self._maybe_purge(database, now)

    def add(
        self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        """Store ``value`` only if ``key`` holds no live value; tell whether it did."""
        key, payload, database, now, expires = self._write(key, value, timeout, version)
        with database.unavailable(self.service_name, self.instance):
            if expires is not None and expires <= now:
                # Stored and expired at once, as Django does: report whether it was free.
                return database.fetch_one(_SQL_GET, (self.instance, key, now)) is None
            added = database.execute(_SQL_ADD, (self.instance, key, payload, expires, now)) == 1
            self._maybe_purge(database, now)
        return added

    def _set_many(self, data: Mapping[str, Any], timeout: Any, version: int | None) -> None:
        """Store the batch in one transaction."""
        database, now = self._db(), self.clock()
        expires = self._expires_at(timeout, now)
        rows = [
            (
                self.instance,
                self.make_and_validate_key(key, version),
                self._serializer.dumps(value),
                expires,
            )
            for key, value in data.items()
        ]
        with database.unavailable(self.service_name, self.instance):
            if expires is not None and expires <= now:
                database.execute_many(_SQL_DELETE, [row[:2] for row in rows])
            else:
                database.execute_many(_SQL_SET, rows)

    def touch(self, key: str, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        """Give a live ``key`` a new lifetime; tell whether it existed."""
        key = self.make_and_validate_key(key, version)
        database, now = self._db(), self.clock()
        expires = self._expires_at(timeout, now)
        with database.unavailable(self.service_name, self.instance):
            if expires is not None and expires <= now:
                with database.transaction() as tx:
                    live = tx.fetch_one(_SQL_GET, (self.instance, key, now)) is not None
                    tx.execute(_SQL_DELETE, (self.instance, key))
                return live
            return database.execute(_SQL_TOUCH, (expires, self.instance, key, now)) == 1

    def incr(self, key: str, delta: int = 1, version: int | None = None) -> Any:
        """Add ``delta`` in one transaction (row locked), keeping the expiry.

        Raise ``ValueError`` when the key holds no live value, as Django does.
        """
        made = self.make_and_validate_key(key, version)
        database, now = self._db(), self.clock()
        lock = " FOR UPDATE" if database.dialect == "postgresql" else ""
        with database.unavailable(self.service_name, self.instance), database.transaction() as tx:
            row = tx.fetch_one(_SQL_GET + lock, (self.instance, made, now))
            current = REFUSED if row is None else self._load(row[0])
            if current is REFUSED:
                raise ValueError(f"Key '{made}' not found")
            value = current + delta
            tx.execute(_SQL_UPDATE, (self._serializer.dumps(value), self.instance, made))
        return value

    def delete(self, key: str, version: int | None = None) -> bool:
        """Remove ``key``; tell whether it held a live value."""
        key = self.make_and_validate_key(key, version)
        database, now = self._db(), self.clock()
        with database.unavailable(self.service_name, self.instance), database.transaction() as tx:
            live = tx.execute(_SQL_DELETE_LIVE, (self.instance, key, now)) == 1
            if not live:
                tx.execute(_SQL_DELETE, (self.instance, key))  # an expired row, if any
        return live

    def delete_many(self, keys: Iterable[str], version: int | None = None) -> None:
        """Remove every key in ``keys``."""
        made = [self.make_and_validate_key(key, version) for key in keys]
        database = self._db()
        with database.unavailable(self.service_name, self.instance):
            for chunk in _chunks(made):
                marks = ", ".join(["%s"] * len(chunk))
                database.execute(
                    f"DELETE FROM {_T} WHERE namespace = %s AND cache_key IN ({marks})",
                    (self.instance, *chunk),
                )

    def clear(self) -> None:
        """Delete every row of this cache's namespace (other caches' rows stay)."""
        database = self._db()
        with database.unavailable(self.service_name, self.instance):
            database.execute(_SQL_CLEAR, (self.instance,))

    def purge(self) -> int:
        """Delete this cache's expired rows now; return how many were deleted."""
        database, now = self._db(), self.clock()
        with database.unavailable(self.service_name, self.instance):
            self._purge_at = now + self.purge_interval
            return max(0, database.execute(_SQL_PURGE, (self.instance, now)))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} cache.{self.instance} table {TABLE}>"
