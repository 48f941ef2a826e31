"""The ``memory`` adapter: the outbox in this process's memory, for tests and demos.

Nothing survives the process, and only relays of this process see the messages. A
publish inside a ``transaction.atomic()`` block on Django's ``default`` database is
appended when that transaction commits (``transaction.on_commit``) and dropped when it
rolls back, so code under test behaves as on the ``db`` adapter. Inbox marks are kept at
once (there is no rollback hook); use ``db`` where a consumer's rollback must forget it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..base import (
    ABANDONED,
    NewMessage,
    Outbox,
    Record,
    Status,
    settings_from_options,
    to_datetime,
)
from ..models import DEAD, PENDING, SENT

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = ["MemoryOutbox"]


@dataclass
class _Row:
    """A stored message and the relay's state of it."""

    row: int
    message: NewMessage
    available_at: float
    status: str = PENDING
    attempts: int = 0
    locked_until: float = 0.0
    locked_by: str = ""
    sent_at: float | None = None
    last_error: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def record(self) -> Record:
        m = self.message
        return Record(
            row=self.row,
            message_id=m.message_id,
            topic=m.topic,
            key=m.key,
            payload=m.payload,
            headers=dict(m.headers),
            attempts=self.attempts,
            created_at=to_datetime(m.created_at),  # type: ignore[arg-type]
            status=self.status,
            last_error=self.last_error,
        )


class MemoryOutbox(Outbox):
    """Rows in a dict guarded by one lock; the same claim and lease rules as ``db``."""

    adapter_name = "memory"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._rows: dict[int, _Row] = {}
        self._next = 0
        self._inbox: dict[tuple[str, str], float] = {}
        self._mutex = threading.Lock()

    @classmethod
    def open(cls, ctx: OpenContext) -> MemoryOutbox:
        """Validate the options; nothing to connect."""
        settings = settings_from_options(ctx.options, instance=ctx.instance)
        return cls(settings, instance=ctx.instance, container=ctx.container)

    def _insert(self, message: NewMessage) -> None:
        def append() -> None:
            with self._mutex:
                self._next += 1
                self._rows[self._next] = _Row(self._next, message, message.created_at)

        connection = _default_connection()
        if connection is not None and connection.in_atomic_block:
            connection.on_commit(append)
        else:
            append()

    def _claim(self, owner: str, limit: int, now: float, lease: float) -> list[Record]:
        with self._mutex:
            claimed: list[Record] = []
            for row in self._rows.values():
                if len(claimed) >= limit:
                    break
                if row.status == PENDING and row.available_at <= now and row.locked_until <= now:
                    abandoned = row.locked_until > 0
                    row.locked_until = now + lease
                    row.locked_by = owner
                    row.attempts += 1
                    claimed.append(replace(row.record(), abandoned=abandoned))
            return claimed

    def _release(self, rows: list[int], owner: str, *, abandoned: bool) -> int:
        with self._mutex:
            count = 0
            for number in rows:
                row = self._rows.get(number)
                if row is not None and row.status == PENDING and row.locked_by == owner:
                    row.locked_until = ABANDONED if abandoned else 0.0
                    row.locked_by, row.attempts = "", row.attempts - 1
                    count += 1
            return count

    def _mark_sent(self, rows: list[int], now: float) -> int:
        with self._mutex:
            count = 0
            for number in rows:
                row = self._rows.get(number)
                if row is not None and row.status == PENDING:
                    row.status, row.sent_at, row.locked_until, row.locked_by = SENT, now, 0.0, ""
                    count += 1
            return count

    def _mark_failed(
        self, row: int, owner: str, error: str, retry_at: float, dead: bool, now: float
    ) -> bool:
        with self._mutex:
            found = self._rows.get(row)
            if found is None or found.status != PENDING or found.locked_by != owner:
                return False
            found.last_error = error
            found.locked_until, found.locked_by = 0.0, ""
            if dead:
                found.status = DEAD
            else:
                found.available_at = retry_at
            return True

    def _status(self, now: float) -> Status:
        from ..base import STALL_AFTER

        with self._mutex:
            rows = list(self._rows.values())
        pending = [r for r in rows if r.status == PENDING]
        oldest = max((now - min(r.message.created_at for r in pending)) if pending else 0.0, 0.0)
        errors = [r for r in rows if r.last_error and r.status != SENT]
        last = max(errors, key=lambda r: r.row).last_error if errors else ""
        return Status(
            pending=len(pending),
            processed=sum(r.status == SENT for r in rows),
            failed=sum(r.status == DEAD for r in rows),
            last_error=last,
            oldest_pending=oldest,
            stalled=oldest > STALL_AFTER,
        )

    def _dead(self, limit: int) -> list[Record]:
        with self._mutex:
            return [r.record() for r in self._rows.values() if r.status == DEAD][:limit]

    def _requeue(self, rows: list[int] | None, now: float) -> int:
        with self._mutex:
            count = 0
            for row in self._rows.values():
                if row.status == DEAD and (rows is None or row.row in rows):
                    row.status, row.attempts, row.available_at = PENDING, 0, now
                    row.locked_until, row.locked_by = 0.0, ""
                    count += 1
            return count

    def _purge_dead(self, rows: list[int]) -> int:
        with self._mutex:
            gone = [n for n in rows if n in self._rows and self._rows[n].status == DEAD]
            for number in gone:
                del self._rows[number]
            return len(gone)

    def _purge_sent(self, cutoff: float) -> int:
        with self._mutex:
            gone = [
                n
                for n, r in self._rows.items()
                if r.status == SENT and r.sent_at is not None and r.sent_at < cutoff
            ]
            for number in gone:
                del self._rows[number]
            for mark in [m for m, at in self._inbox.items() if at < cutoff]:
                del self._inbox[mark]
            return len(gone)

    def _seen(self, consumer: str, message_id: str, now: float) -> bool:
        with self._mutex:
            if (consumer, message_id) in self._inbox:
                return True
            self._inbox[(consumer, message_id)] = now
            return False


def _default_connection() -> Any:
    """Return Django's ``default`` connection when databases are configured, else None."""
    try:
        from django.conf import settings
        from django.db import DEFAULT_DB_ALIAS, connections

        if DEFAULT_DB_ALIAS not in getattr(settings, "DATABASES", {}):
            return None
        return connections[DEFAULT_DB_ALIAS]
    except Exception:  # Django not configured: nothing to join
        return None
