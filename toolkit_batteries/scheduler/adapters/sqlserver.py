"""The ``sqlserver`` adapter: the embedded loop, with slot claims kept in a SQL table.

Everything about *when* a slot fires is the ``embedded`` adapter's (one-minute slots,
the per-entry slot memory, missed slots, time zones, the loop). What differs is the
claim each (schedule, slot) takes before it is dispatched: instead of a lease on the
``lock`` battery, it is a row of one table, created on open (``IF NOT EXISTS``)::

    toolkit_scheduler_claims(
        name        text     "<scheduler instance>:<schedule>", as "default:digest"
        slot        text     the slot's minute in UTC, as "2025-01-06T08:00Z"
        claimed_at  double   epoch seconds, by the scheduler's clock
        claimed_by  text     "<host>:<pid>:<token>" of the claiming scheduler
        PRIMARY KEY (name, slot)
    )

A claim is ``INSERT ... ON CONFLICT DO NOTHING``: the scheduler that inserted the row
(row count 1) dispatches; every other one, in this process or another, on this host or
another, skips the slot. Rows are never released, so a late process skips a claimed
slot however late it looks, as long as the row is kept: rows older than
:data:`DEFAULT_KEEP` (a day) are deleted by a scheduler's first claim and then at most
once every :data:`DEFAULT_PRUNE_EVERY` (an hour), which keeps the table small. Ages are
measured with the scheduler's clock (so a test's fake clock prunes what it claimed).

``dsn`` picks the database (a PostgreSQL URL or a SQLite file path), sharing the pool
registered for it unless ``dedicated_pool``; an empty ``dsn`` borrows the container's
``db`` service. A claim that fails (the database is unreachable) dispatches nothing and
is reported as a failed :class:`~toolkit_batteries.scheduler.base.Fired`.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import ConfigurationError, ServiceUnavailableError

from .embedded import EmbeddedScheduler, _settings_time_zone, floor_minute

__all__ = ["DEFAULT_KEEP", "DEFAULT_PRUNE_EVERY", "TABLE", "SQLServerScheduler", "slot_text"]

logger = logging.getLogger("toolkit.scheduler")

#: The table every claim lives in.
TABLE = "toolkit_scheduler_claims"
#: Seconds a claim row is kept before pruning deletes it.
DEFAULT_KEEP = 86_400.0
#: Seconds between two prunes (by the scheduler's clock), on top of the one on open.
DEFAULT_PRUNE_EVERY = 3_600.0

_DDL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} ("
    "name text NOT NULL, slot text NOT NULL, claimed_at double precision NOT NULL, "
    "claimed_by text NOT NULL, PRIMARY KEY (name, slot))",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_claimed_at ON {TABLE} (claimed_at)",
)
_CLAIM = (
    f"INSERT INTO {TABLE} (name, slot, claimed_at, claimed_by) "
    "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING"
)
_PRUNE = f"DELETE FROM {TABLE} WHERE claimed_at < %s"


def slot_text(slot: datetime) -> str:
    """Return the ``slot`` column for the aware datetime ``slot`` (its UTC minute)."""
    return floor_minute(slot).strftime("%Y-%m-%dT%H:%MZ")


def _claimer() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class SQLServerScheduler(EmbeddedScheduler):
    """The embedded scheduler claiming each (schedule, slot) as a row of :data:`TABLE`."""

    adapter_name = "sqlserver"

    def __init__(
        self,
        database: Any,
        *,
        keep: float = DEFAULT_KEEP,
        prune_every: float = DEFAULT_PRUNE_EVERY,
        **kwargs: Any,
    ) -> None:
        """Create an empty scheduler claiming slots in ``database``.

        ``database`` is a :class:`~toolkit_batteries.db.Database` (its table is created
        by :meth:`create_table`, which :meth:`open` calls); ``keep`` is how many seconds a
        claim row is kept, ``prune_every`` the seconds between two prunes. The other
        arguments are :class:`EmbeddedScheduler`'s, except ``lock``: claims are rows.
        """
        if kwargs.get("lock") is not None:
            raise TypeError("the sqlserver scheduler claims slots in SQL, not on a lock")
        if keep <= 0 or prune_every <= 0:
            raise ValueError("keep and prune_every must be positive")
        super().__init__(**kwargs)
        #: The :class:`~toolkit_batteries.db.Database` holding the claims table.
        self.database = database
        self.keep = float(keep)
        self.prune_every = float(prune_every)
        #: What this scheduler writes in ``claimed_by``.
        self.claimed_by = _claimer()
        self._pruned_at: float | None = None
        self._prune_lock = threading.Lock()

    @classmethod
    def open(cls, ctx: OpenContext) -> SQLServerScheduler:
        """Open (or borrow) the database and create the claims table if needed.

        Old claims are pruned by the first claim, with the clock the scheduler has then.
        """
        from toolkit_batteries.db.base import Database, pool_settings

        options = ctx.options
        dsn = str(options.dsn or "").strip()
        if dsn:
            pool = ctx.pools.sql(
                ctx.service,
                dsn,
                pool_settings(options),
                instance=ctx.instance,
                dedicated=bool(options.dedicated_pool),
            )
            database = Database(pool, instance=ctx.instance)
        else:
            try:
                database = ctx.container.db()
            except ConfigurationError as exc:
                raise ConfigurationError(
                    f"{ctx.service}.{ctx.instance}: slots are claimed in the db service "
                    f"(dsn is empty), which does not open: {exc}"
                ) from exc
            except ServiceUnavailableError as exc:
                raise ServiceUnavailableError(
                    ctx.service,
                    f"slots are claimed in the db service (dsn is empty): {exc}",
                    instance=ctx.instance,
                ) from None
        timeout = options.close_timeout
        scheduler = cls(
            database,
            timezone=_settings_time_zone(),
            close_timeout=timeout.total_seconds() if timeout else 5.0,
            instance=ctx.instance,
        )
        scheduler.create_table()
        return scheduler

    # ------------------------------------------------------------------ SQL

    @contextmanager
    def _guard(self, doing: str) -> Iterator[None]:
        """Turn a lost or refused database connection into ServiceUnavailableError."""
        driver = self.database.driver
        try:
            yield
        except (driver.OperationalError, driver.InterfaceError) as exc:
            raise ServiceUnavailableError(
                self.service_name,
                f"cannot {doing} ({type(exc).__name__})",
                instance=self.instance,
            ) from None

    def create_table(self) -> None:
        """Create the claims table and its index if they do not exist.

        On PostgreSQL a transaction-scoped advisory lock serializes two processes
        creating it at once (``IF NOT EXISTS`` is not atomic against a concurrent one).
        """
        driver = self.database.driver
        try:
            with self._guard("create the claims table"), self.database.transaction() as tx:
                if self.database.dialect == "postgresql":
                    tx.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (TABLE,))
                for statement in _DDL:
                    tx.execute(statement)
        except ServiceUnavailableError:
            raise
        except driver.Error as exc:
            raise ServiceUnavailableError(
                self.service_name,
                f"cannot create the claims table ({type(exc).__name__})",
                instance=self.instance,
            ) from None

    def prune(self, now: float | None = None) -> int:
        """Delete the claims older than ``keep`` seconds; return how many were deleted."""
        moment = self._epoch() if now is None else now
        with self._guard("prune old claims"):
            deleted = self.database.execute(_PRUNE, (moment - self.keep,))
        self._pruned_at = moment
        if deleted > 0:
            logger.debug("scheduler: pruned %d old slot claim(s)", deleted)
        return max(deleted, 0)

    def _maybe_prune(self, now: float) -> None:
        with self._prune_lock:
            if self._pruned_at is not None and now - self._pruned_at < self.prune_every:
                return
            self._pruned_at = now  # one attempt per period, even when it fails
        try:
            self.prune(now)
        except Exception as exc:  # pruning is housekeeping: it never blocks a claim
            logger.warning("scheduler: pruning old slot claims failed: %s", exc)

    def _epoch(self) -> float:
        return self.clock().timestamp()

    def _claim(self, name: str, slot: datetime) -> bool:
        """Insert the (schedule, slot) row; tell whether this scheduler inserted it."""
        now = self._epoch()
        self._maybe_prune(now)
        key = f"{self.instance}:{name}"
        with self._guard("claim a slot"):
            inserted = self.database.execute(_CLAIM, (key, slot_text(slot), now, self.claimed_by))
        if inserted == 1:
            return True
        logger.debug("scheduler: %s: slot %s claimed elsewhere, skipped", name, slot_text(slot))
        with self._counter:
            self.claimed_elsewhere += 1
        return False

    def claims(self) -> list[tuple[str, str, float, str]]:
        """Return every claim row ``(name, slot, claimed_at, claimed_by)``, oldest first."""
        with self._guard("read the claims"):
            rows = self.database.fetch_all(
                f"SELECT name, slot, claimed_at, claimed_by FROM {TABLE} "
                "ORDER BY claimed_at, name, slot"
            )
        return [(str(a), str(b), float(c), str(d)) for a, b, c, d in rows]

    def describe_claims(self) -> str:
        """Say where slots are claimed, display-safe (``schedule:run``'s start line)."""
        target = self.database.target
        where = f"{self.database.dialect} {target}" if target else self.database.dialect
        return f"slots claimed in table {TABLE} ({where})"

    def __repr__(self) -> str:
        return (
            f"<SQLServerScheduler scheduler.{self.instance} {self.database.dialect}, "
            f"{len(self._entries)} entries>"
        )
