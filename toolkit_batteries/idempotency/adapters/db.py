"""The ``db`` adapter: idempotency records as rows of a Django model, on SQLite or PostgreSQL.

* The table is :class:`~toolkit_batteries.idempotency.models.IdempotencyRecord`
  (``toolkit_idempotency_record``), created by ``manage.py migrate``; opening checks that
  it exists (:func:`~toolkit_batteries.db.require_tables`) and never runs DDL. Every
  instance shares it; rows carry their ``instance``.
* An empty ``dsn`` borrows the container's ``db`` service (the project's database); a
  ``dsn`` is reached through the ``DATABASES`` alias of that database
  (:func:`~toolkit_batteries.db.database_for`). Statements run on Django's connection for
  that alias, so a record written inside the caller's ``transaction.atomic()`` commits or
  rolls back with the caller's rows.
* Reserving is one ``INSERT ... ON CONFLICT (instance, key) DO UPDATE ... WHERE <the old
  record expired>``: the unique constraint makes it atomic on both dialects, so among any
  number of processes exactly one inserts (or takes over an expired record). That one
  statement is raw SQL because the ORM cannot say it; the rest goes through the ORM.
* Expired records are invisible at once and deleted on open and then at most once a
  minute (checked on reserve). Time comes from :attr:`DBIdempotency.clock`
  (``time.time``), which tests replace.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.adapter import ClosedResource, OpenContext
from toolkit_batteries.core.errors import ConfigurationError
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.db.base import InstanceRows

from ..base import DEFAULT_TTL, Idempotency, ReservationState

if TYPE_CHECKING:
    from toolkit_batteries.db import Database

__all__ = ["TABLE", "DBIdempotency"]

_Found = tuple[ReservationState, str, bytes | None]
#: The table every record lives in (the model's ``db_table``).
TABLE = "toolkit_idempotency_record"
#: Seconds between purges of expired records.
PURGE_INTERVAL = 60.0
#: Attempts to read a record that vanished between the insert and the read.
_ATTEMPTS = 5
#: Longest instance name the ``instance`` column holds.
MAX_INSTANCE_LENGTH = 64

_RESERVE = (
    f"INSERT INTO {TABLE} "
    "(instance, key, state, token, fingerprint, response, created_at, expires_at) "
    "VALUES (%s, %s, 'in_progress', %s, %s, NULL, %s, %s) "
    "ON CONFLICT (instance, key) DO UPDATE SET state = 'in_progress', "
    "token = excluded.token, fingerprint = excluded.fingerprint, response = NULL, "
    "created_at = excluded.created_at, expires_at = excluded.expires_at "
    f"WHERE {TABLE}.expires_at <= %s"
)


def _model() -> Any:
    """Return the model class from Django's registry (its apps are ready by then)."""
    from django.apps import apps

    return apps.get_model("toolkit_idempotency.IdempotencyRecord")


@traced("_reserve", "_commit", "_release", "_get", "_delete")
class DBIdempotency(InstanceRows, Idempotency):
    """Idempotency records as rows of the ``IdempotencyRecord`` model."""

    adapter_name = "db"

    def __init__(
        self,
        database: Database,
        *,
        ttl: float = DEFAULT_TTL,
        instance: str = "default",
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Use ``database`` (a :class:`~toolkit_batteries.db.Database`) whose tables exist."""
        super().__init__(ttl=ttl, instance=instance)
        if len(instance) > MAX_INSTANCE_LENGTH:
            raise ConfigurationError(
                f"idempotency.{instance[:MAX_INSTANCE_LENGTH]}...: the db adapter's instance "
                f"names are at most {MAX_INSTANCE_LENGTH} characters (the instance column)"
            )
        self.database = database
        self._model = _model()
        #: The time records expire by (Unix seconds, shared by every process).
        self.clock = clock
        self._purge_at = 0.0

    @classmethod
    def open(cls, ctx: OpenContext) -> DBIdempotency:
        """Reach the database (borrowed or by ``dsn``); refuse it without the table."""
        from toolkit_batteries.db import database_for, require_tables

        database = database_for(ctx)
        require_tables(database, _model(), service=ctx.service, instance=ctx.instance)
        store = cls(database, ttl=ctx.options.ttl.total_seconds(), instance=ctx.instance)
        store.purge()
        return store

    # ------------------------------------------------------------------ primitives

    def _reserve(self, key: str, token: str, fingerprint: str, ttl: float) -> _Found | None:
        def reserve() -> _Found | None:
            for _ in range(_ATTEMPTS):
                now = self.clock()
                if now >= self._purge_at:
                    self.purge()
                params = (self.instance, key, token, fingerprint, now, now + ttl, now)
                if self.database.execute(_RESERVE, params) == 1:
                    return None
                found = self._live(key, now)
                if found is not None:
                    return found
            # Released and re-reserved under our feet every time: report it as taken (by
            # this same request, so a caller comparing fingerprints answers "in progress").
            return ReservationState.IN_PROGRESS, fingerprint, None

        return self._guarded(reserve)

    def _live(self, key: str, now: float) -> _Found | None:
        row = (
            self._rows.filter(key=key, expires_at__gt=now)
            .values_list("state", "fingerprint", "response")
            .first()
        )
        if row is None:
            return None
        state, stored_fingerprint, payload = row
        return (
            ReservationState(state),
            stored_fingerprint or "",
            None if payload is None else bytes(payload),
        )

    def _in_progress(self, key: str, token: str, now: float) -> Any:
        rows = self._rows.filter(key=key, state="in_progress", expires_at__gt=now)
        return rows.filter(token=token) if token else rows

    def _commit(self, key: str, payload: bytes, ttl: float, token: str) -> bool:
        now = self.clock()
        rows = self._in_progress(key, token, now)
        return self._guarded(
            lambda: rows.update(state="completed", response=payload, expires_at=now + ttl) == 1
        )

    def _release(self, key: str, token: str) -> bool:
        rows = self._in_progress(key, token, self.clock())
        return self._guarded(lambda: rows.delete()[0] == 1)

    def _get(self, key: str) -> _Found | None:
        return self._guarded(lambda: self._live(key, self.clock()))

    def _delete(self, key: str) -> bool:
        from django.db import transaction

        def delete() -> bool:
            with transaction.atomic(using=self.database.alias):
                live = self._live(key, self.clock()) is not None
                self._rows.filter(key=key).delete()
            return live

        return self._guarded(delete)

    def purge(self) -> int:
        """Delete this instance's expired records now; return how many were deleted."""
        now = self.clock()
        self._purge_at = now + PURGE_INTERVAL
        return self._guarded(lambda: self._rows.filter(expires_at__lte=now).delete()[0])

    def close(self) -> None:
        """Stop using the database; the connection is Django's (or the ``db`` service's)."""
        self.database = ClosedResource(self.service_name, self.instance)  # type: ignore[assignment]

    def __repr__(self) -> str:
        closed = isinstance(self.database, ClosedResource)
        alias = "(closed)" if closed else self.database.alias
        return f"<{type(self).__name__} idempotency.{self.instance} alias {alias}>"
