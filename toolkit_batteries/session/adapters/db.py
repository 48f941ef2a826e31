"""The ``db`` adapter: sessions as rows of a Django model, on SQLite or PostgreSQL.

The table is :class:`~toolkit_batteries.session.models.SessionRecord`
(``toolkit_session_record``), created by ``manage.py migrate``; opening checks that it
exists and never runs DDL. Rows are written through the ORM on Django's connection
(``Model.objects.using(alias)``), so a session created inside the caller's
``transaction.atomic()`` commits or rolls back with the caller's rows.

Every row carries its ``instance`` and every query filters by it (issue 29), so two
instances on one table never see each other's sessions.

``expires_at`` is milliseconds since the epoch by the application's clock, so every query
compares with a parameter and never with the server's ``now()``: the two dialects
behave the same, and tests can inject a clock. Expired rows are invisible at once,
removed when met, and swept in bulk by :meth:`DBSessionStore.purge_expired`, which
``create`` also runs every :data:`PURGE_EVERY` inserts.

An empty ``dsn`` borrows the container's ``db`` service (the project's database); a
``dsn`` (a PostgreSQL URL or a file path) is reached through the ``DATABASES`` alias of
that database (:func:`toolkit_batteries.db.database_for`).
"""

from __future__ import annotations

import itertools
import time
from datetime import timedelta
from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.db.base import Database
from toolkit_batteries.session.base import DEFAULT_TTL, Clock, SessionStore

__all__ = ["PURGE_EVERY", "TABLE", "DBSessionStore"]

#: The table every session lives in (the model's ``db_table``).
TABLE = "toolkit_session_record"
#: ``create`` sweeps expired rows once every this many inserts (per process).
PURGE_EVERY = 500


def _model() -> Any:
    """Return the model class from Django's registry (its apps are ready by then)."""
    from django.apps import apps

    return apps.get_model("toolkit_session.SessionRecord")


@traced("_insert", "_fetch", "_replace", "_extend", "_remove")
class DBSessionStore(SessionStore):
    """Sessions as :class:`~toolkit_batteries.session.models.SessionRecord` rows."""

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
        self._model = _model()
        self._inserts = itertools.count(1)

    @classmethod
    def open(cls, ctx: OpenContext) -> DBSessionStore:
        """Reach the database (borrowed or by ``dsn``); refuse it without the table."""
        from toolkit_batteries.db import database_for, require_tables

        database = database_for(ctx)
        require_tables(database, _model(), service=ctx.service, instance=ctx.instance)
        return cls(database, ttl=ctx.options.ttl, instance=ctx.instance)

    @property
    def _rows(self) -> Any:
        """Return this instance's rows on this store's database alias (never another's)."""
        return self._model.objects.using(self.database.alias).filter(instance=self.instance)

    def _insert(self, session_id: str, payload: str, ttl_ms: int) -> bool:
        from django.db import IntegrityError, transaction

        if next(self._inserts) % PURGE_EVERY == 0:
            self.purge_expired()
        expires = self._now_ms() + ttl_ms
        try:
            # A savepoint, so a taken id does not spoil the caller's transaction.
            with transaction.atomic(using=self.database.alias):
                self._model.objects.using(self.database.alias).create(
                    id=session_id, data=payload, expires_at=expires, instance=self.instance
                )
        except IntegrityError:
            return False  # the id exists: the caller draws another
        return True

    def _fetch(self, session_id: str) -> str | None:
        now = self._now_ms()
        row = self._rows.filter(id=session_id).values_list("data", "expires_at").first()
        if row is None:
            return None
        if row[1] <= now:
            self._rows.filter(id=session_id, expires_at__lte=now).delete()
            return None
        return row[0]

    def _replace(self, session_id: str, payload: str) -> bool:
        live = self._rows.filter(id=session_id, expires_at__gt=self._now_ms())
        return live.update(data=payload) > 0

    def _extend(self, session_id: str, ttl_ms: int) -> bool:
        now = self._now_ms()
        live = self._rows.filter(id=session_id, expires_at__gt=now)
        return live.update(expires_at=now + ttl_ms) > 0

    def _rewrite(self, session_id: str, payload: str, ttl_ms: int) -> bool:
        now = self._now_ms()
        live = self._rows.filter(id=session_id, expires_at__gt=now)
        return live.update(data=payload, expires_at=now + ttl_ms) > 0

    def _remove(self, session_id: str) -> None:
        self._rows.filter(id=session_id).delete()

    def purge_expired(self) -> int:
        """Delete every expired row now; return how many were deleted."""
        deleted, _ = self._rows.filter(expires_at__lte=self._now_ms()).delete()
        return deleted
