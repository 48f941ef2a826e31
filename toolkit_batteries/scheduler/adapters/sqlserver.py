"""The ``sqlserver`` adapter: the embedded loop, with slot claims kept in a SQL table.

Everything about *when* a slot fires is the ``embedded`` adapter's (one-minute slots,
the per-entry slot memory, missed slots, time zones, the loop). What differs is the
claim each (schedule, slot) takes before it is dispatched: instead of a lease on the
``lock`` battery, it is a row of the model
:class:`~toolkit_batteries.scheduler.models.SchedulerClaim` (table
``toolkit_scheduler_claim``, created by ``manage.py migrate``; opening checks that it
exists and never runs DDL)::

    name        "<scheduler instance>:<schedule>", as "default:digest"
    slot        the slot's minute in UTC, as "2025-01-06T08:00Z"
    claimed_at  epoch seconds, by the scheduler's clock
    claimed_by  "<host>:<pid>:<token>" of the claiming scheduler
    UNIQUE (name, slot)

A claim is ``INSERT ... ON CONFLICT DO NOTHING``: the scheduler that inserted the row
(row count 1) dispatches; every other one, in this process or another, on this host or
another, skips the slot. Rows are never released, so a late process skips a claimed
slot however late it looks, as long as the row is kept: rows older than
:data:`DEFAULT_KEEP` (a day) are deleted by a scheduler's first claim and then at most
once every :data:`DEFAULT_PRUNE_EVERY` (an hour), which keeps the table small. Ages are
measured with the scheduler's clock (so a test's fake clock prunes what it claimed).
Since a pruned row can no longer stop a late process, a slot older than ``keep`` (less
the clock skew allowance) never fires: the embedded adapter's catch-up rule, with
``keep`` as the claim's lifetime.

``dsn`` picks the database (a PostgreSQL URL or a SQLite file path), reached through the
``DATABASES`` alias of that database (an alias of its own with ``dedicated_pool``); an
empty ``dsn`` borrows the container's ``db`` service
(:func:`toolkit_batteries.db.database_for`). Claims are written on Django's connection,
so inside a caller's ``transaction.atomic()`` they commit or roll back with it. A claim
that fails (the database is unreachable) dispatches nothing and is reported as a failed
:class:`~toolkit_batteries.scheduler.base.Fired`.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import ConfigurationError, ServiceUnavailableError
from toolkit_batteries.core.tracing import traced

from .embedded import (
    ContainerDispatcher,
    EmbeddedScheduler,
    _settings_time_zone,
    floor_minute,
)

__all__ = ["DEFAULT_KEEP", "DEFAULT_PRUNE_EVERY", "TABLE", "SQLServerScheduler", "slot_text"]

logger = logging.getLogger("toolkit.scheduler")

#: The table every claim lives in (the model's ``db_table``).
TABLE = "toolkit_scheduler_claim"
#: Seconds a claim row is kept before pruning deletes it.
DEFAULT_KEEP = 86_400.0
#: Seconds between two prunes (by the scheduler's clock), on top of the one on open.
DEFAULT_PRUNE_EVERY = 3_600.0

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


@traced("_claim", "prune")
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

        ``database`` is a :class:`~toolkit_batteries.db.Database` whose migrations ran
        (the claims table exists); ``keep`` is how many seconds a
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

    def claim_lifetime(self) -> float | None:
        """Return ``keep``: a claim row is seen by every process until pruning deletes it."""
        return self.keep

    @classmethod
    def open(cls, ctx: OpenContext) -> SQLServerScheduler:
        """Reach the database (borrowed or by ``dsn``); refuse it without the claims table.

        The job dispatcher and its queue come from the container that opens the
        scheduler, at the first fire (see the ``embedded`` adapter). Old claims are pruned
        by the first claim, with the clock the scheduler has then.
        """
        from toolkit_batteries.db import database_for, require_tables
        from toolkit_batteries.scheduler.models import SchedulerClaim

        options = ctx.options
        try:
            database = database_for(ctx)
        except ConfigurationError as exc:
            if str(options.dsn or "").strip():
                raise
            raise ConfigurationError(
                f"{ctx.service}.{ctx.instance}: slots are claimed in the db service "
                f"(dsn is empty), which does not open: {exc}"
            ) from exc
        except ServiceUnavailableError as exc:
            if str(options.dsn or "").strip():
                raise
            raise ServiceUnavailableError(
                ctx.service,
                f"slots are claimed in the db service (dsn is empty): {exc}",
                instance=ctx.instance,
            ) from None
        require_tables(database, SchedulerClaim, service=ctx.service, instance=ctx.instance)
        timeout = options.close_timeout
        scheduler = cls(
            database,
            timezone=_settings_time_zone(),
            close_timeout=timeout.total_seconds() if timeout else 5.0,
            instance=ctx.instance,
        )
        scheduler.resolve_dispatcher = ContainerDispatcher(ctx.container)
        return scheduler

    # ------------------------------------------------------------------ SQL

    def _guard(self, doing: str) -> AbstractContextManager[None]:
        """Turn a lost or refused database connection into ServiceUnavailableError."""
        return self.database.unavailable(self.service_name, self.instance, doing)

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
