"""The ``db`` adapter: sessions in a SQL table, on SQLite or PostgreSQL.

The table is created on open (``CREATE TABLE IF NOT EXISTS``, both dialects)::

    toolkit_sessions(id varchar(128) PRIMARY KEY, data text, expires_at bigint)

``expires_at`` is milliseconds since the epoch by the application's clock, so every
query compares with a parameter and never with the server's ``now()``: the two dialects
behave the same, and tests can inject a clock. Expired rows are invisible at once,
removed when met, and swept in bulk by :meth:`DBSessionStore.purge_expired`, which
``create`` also runs every :data:`PURGE_EVERY` inserts.

An empty ``dsn`` borrows the container's ``db`` service (same pool, same database as the
rest of the project); a ``dsn`` (a PostgreSQL URL or a file path) opens or borrows the
pool registered for it, or a private one with ``dedicated_pool``.
"""

from __future__ import annotations

import itertools
import time
from datetime import timedelta

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.db.base import Database, pool_settings
from toolkit_batteries.session.base import DEFAULT_TTL, Clock, SessionStore

__all__ = ["PURGE_EVERY", "TABLE", "DBSessionStore"]

#: The table every session lives in.
TABLE = "toolkit_sessions"
#: ``create`` sweeps expired rows once every this many inserts (per process).
PURGE_EVERY = 500

_DDL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} ("
    "id varchar(128) PRIMARY KEY, data text NOT NULL, expires_at bigint NOT NULL)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_expires_at ON {TABLE} (expires_at)",
)


class DBSessionStore(SessionStore):
    """Sessions as rows of :data:`TABLE` through the db battery's query API."""

    adapter_name = "db"

    def __init__(
        self,
        database: Database,
        *,
        ttl: timedelta = DEFAULT_TTL,
        instance: str = "default",
        clock: Clock = time.time,
    ) -> None:
        super().__init__(ttl=ttl, instance=instance, clock=clock)
        self.database = database
        self._inserts = itertools.count(1)

    @classmethod
    def open(cls, ctx: OpenContext) -> DBSessionStore:
        """Reach the database (borrowed or by ``dsn``) and create the table if needed."""
        options = ctx.options
        dsn = options.dsn.strip()
        if dsn:
            pool = ctx.pools.sql(
                ctx.service,
                dsn,
                pool_settings(options),
                instance=ctx.instance,
                dedicated=options.dedicated_pool,
            )
            database = Database(pool, instance=ctx.instance)
        else:
            database = ctx.container.db()
        store = cls(database, ttl=options.ttl, instance=ctx.instance)
        store.create_table()
        return store

    def create_table(self) -> None:
        """Create the sessions table and its expiry index if they do not exist.

        Two processes starting together can race on PostgreSQL, where ``IF NOT EXISTS``
        is not atomic against a concurrent creator; the loser retries once and then
        finds the table there.
        """
        for attempt in (1, 2):
            try:
                with self.database.transaction():
                    for statement in _DDL:
                        self.database.execute(statement)
                return
            except self.database.driver.Error:
                if attempt == 2:
                    raise
                time.sleep(0.05)

    def _insert(self, session_id: str, payload: str, ttl_ms: int) -> bool:
        if next(self._inserts) % PURGE_EVERY == 0:
            self.purge_expired()
        now = self._now_ms()
        try:
            self.database.execute(
                f"INSERT INTO {TABLE} (id, data, expires_at) VALUES (%s, %s, %s)",
                (session_id, payload, now + ttl_ms),
            )
        except self.database.driver.IntegrityError:
            return False  # the id exists (2^-256 odds): the caller draws another
        return True

    def _fetch(self, session_id: str) -> str | None:
        now = self._now_ms()
        row = self.database.fetch_one(
            f"SELECT data, expires_at FROM {TABLE} WHERE id = %s", (session_id,)
        )
        if row is None:
            return None
        if row[1] <= now:
            self.database.execute(
                f"DELETE FROM {TABLE} WHERE id = %s AND expires_at <= %s", (session_id, now)
            )
            return None
        return row[0]

    def _replace(self, session_id: str, payload: str) -> bool:
        changed = self.database.execute(
            f"UPDATE {TABLE} SET data = %s WHERE id = %s AND expires_at > %s",
            (payload, session_id, self._now_ms()),
        )
        return changed > 0

    def _extend(self, session_id: str, ttl_ms: int) -> bool:
        now = self._now_ms()
        changed = self.database.execute(
            f"UPDATE {TABLE} SET expires_at = %s WHERE id = %s AND expires_at > %s",
            (now + ttl_ms, session_id, now),
        )
        return changed > 0

    def _remove(self, session_id: str) -> None:
        self.database.execute(f"DELETE FROM {TABLE} WHERE id = %s", (session_id,))

    def purge_expired(self) -> int:
        """Delete every expired row now; return how many were deleted."""
        changed = self.database.execute(
            f"DELETE FROM {TABLE} WHERE expires_at <= %s", (self._now_ms(),)
        )
        return max(changed, 0)
