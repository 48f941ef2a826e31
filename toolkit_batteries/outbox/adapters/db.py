"""The ``db`` adapter (default): the outbox as rows of a migrated table, on PostgreSQL or SQLite.

Every statement runs on ``django.db.connections[alias]`` (the
:class:`~toolkit_batteries.db.Database` of :func:`~toolkit_batteries.db.database_for`), so
a ``publish`` inside the caller's ``transaction.atomic()`` on that alias commits or rolls
back with the caller's rows. An empty ``dsn`` borrows the ``db`` service (the project's
database); a ``dsn`` names a database of its own. Opening checks that the tables exist
(``manage.py migrate``) and never runs DDL.

The claim is one statement that takes a batch and leases it to one relay:

* PostgreSQL: ``WITH c AS MATERIALIZED (SELECT id ... ORDER BY id LIMIT n FOR UPDATE
  SKIP LOCKED) UPDATE ... FROM c``: concurrent relays skip each other's rows instead of
  queueing behind them, so two relays never hold one row at once, and the batch is
  taken once (see ``_CLAIM_PG``).
* SQLite has no ``SKIP LOCKED``: the same ``UPDATE ... WHERE id IN (SELECT ...)
  RETURNING`` takes SQLite's single write lock before it reads, so claims serialise and
  are atomic as they stand; several relays are safe but take turns (run one).

Both read the partial index ``toolkit_outbox_pending`` (``id WHERE status = 'pending'``):
sent rows stay for ``retention``, and a claim walking the primary key stepped over every
one of them; through the index a claim reads O(batch) entries (``tests/batteries/outbox/
test_claim_plan.py`` reads the plans).

Each claimed record says whether it was *abandoned* (``locked_until`` was set: a relay
held it and never settled it). PostgreSQL returns the old value from the claim's own
subquery; SQLite, whose ``RETURNING`` shows new values only, reads the abandoned ids of
the same candidates first, in the claim's ``IMMEDIATE`` transaction.

A claimed row's lease (``locked_until``) is ``lock_seconds`` long; a relay that dies
leaves its batch pending, and the rows become claimable again when the lease ends, so
a batch published but not marked is published again (at least once; consumers dedupe
with the inbox). Outside a transaction, the relay's claim and mark statements on
PostgreSQL skip the WAL flush (``synchronous_commit`` off for that statement): losing
one in a database crash only means a redelivery. Publishes are never relaxed.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.tracing import traced

from ..base import (
    ABANDONED,
    STALL_AFTER,
    NewMessage,
    Outbox,
    Record,
    Status,
    canonical_id,
    settings_from_options,
)
from ..base import to_datetime as _dt

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext
    from toolkit_batteries.db import Database

__all__ = ["INBOX", "MESSAGES", "DBOutbox", "check_tables"]

#: The outbox table (:class:`~toolkit_batteries.outbox.models.OutboxMessage`).
MESSAGES = "toolkit_outbox_message"
#: The inbox table (:class:`~toolkit_batteries.outbox.models.InboxMessage`).
INBOX = "toolkit_outbox_inbox"
#: Row numbers per statement when marking or requeueing.
ID_CHUNK = 500

_COLUMNS = 'id, message_id, topic, "key", payload, headers, attempts, created_at'
_RELAX = "(SELECT set_config('synchronous_commit', 'off', true)) AS relax"
#: The batch is a MATERIALIZED CTE, taken once. As a subquery in ``UPDATE ... FROM`` the
#: planner may put it on the inner side of a nested loop and run it again for every outer
#: row: each run locks up to ``LIMIT`` more rows, and a batch of 2 leased 5 (seen in the
#: full test suite, once the table's statistics made that plan the cheaper one).
_CLAIM_PG = f"""WITH c AS MATERIALIZED (
    SELECT id, locked_until AS was_locked FROM {MESSAGES}
          WHERE status = 'pending' AND available_at <= %s AND locked_until <= %s{{extra}}
          ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED)
    UPDATE {MESSAGES} AS m
    SET locked_until = %s, locked_by = %s, attempts = m.attempts + 1
    FROM c{{relax}}
    WHERE m.id = c.id
    RETURNING m.id, m.message_id, m.topic, m."key", m.payload, m.headers, m.attempts,
              m.created_at, c.was_locked > 0"""
_CLAIM_SQLITE = f"""UPDATE {MESSAGES}
    SET locked_until = %s, locked_by = %s, attempts = attempts + 1
    WHERE id IN (SELECT id FROM {MESSAGES}
          WHERE status = 'pending' AND available_at <= %s AND locked_until <= %s{{extra}}
          ORDER BY id LIMIT %s)
    RETURNING {_COLUMNS}"""
#: SQLite's RETURNING shows new values only: the abandoned rows among the same candidates
#: are read first, in the claim's transaction (SQLite's entries begin IMMEDIATE).
_ABANDONED_SQLITE = f"""SELECT id FROM (SELECT id, locked_until FROM {MESSAGES}
          WHERE status = 'pending' AND available_at <= %s AND locked_until <= %s{{extra}}
          ORDER BY id LIMIT %s) AS c WHERE locked_until > 0"""

_ACCEPTED = {
    "table": ("", "outbox", MESSAGES),
    "inbox_table": ("", "inbox", INBOX),
}


def check_tables(options: Any, *, instance: str = "default") -> None:
    """Refuse ``table`` / ``inbox_table`` naming another table than the migrated ones.

    The tables are models (``manage.py migrate`` creates them under fixed names), so the
    options accept their defaults (``outbox``, ``inbox``) or the real names only.
    """
    for name, accepted in _ACCEPTED.items():
        value = str(getattr(options, name, "") or "").strip()
        if value not in accepted:
            raise InvalidOptionsError(
                "outbox",
                name,
                f'cannot move the migrated tables {MESSAGES} and {INBOX}; leave it "{accepted[1]}"',
                instance=instance,
            )


def _in(rows: Sequence[int]) -> str:
    return "(" + ", ".join(["%s"] * len(rows)) + ")"


def _by_chunk(
    execute: Callable[[str, Sequence[Any]], int],
    sql: str,
    params: Sequence[Any],
    rows: Sequence[int],
) -> int:
    """Run ``sql`` once per ``ID_CHUNK`` of ``rows`` (``{ids}`` becomes their ``IN`` list).

    The list stays within every driver's parameter limit however many rows a batch
    settles; ``params`` come before the ids. Return the rows changed in all.
    """
    total = 0
    for start in range(0, len(rows), ID_CHUNK):
        chunk = rows[start : start + ID_CHUNK]
        total += execute(sql.replace("{ids}", _in(chunk)), (*params, *chunk))
    return total


def _headers(value: Any) -> dict[str, str]:
    if isinstance(value, str):
        value = json.loads(value or "{}")
    return dict(value or {})


def _record(
    row: Sequence[Any], status: str = "pending", last_error: str = "", abandoned: bool = False
) -> Record:
    number, message_id, topic, key, payload, headers, attempts, created_at = row[:8]
    return Record(
        row=int(number),
        message_id=canonical_id(message_id),
        topic=topic,
        key=key or "",
        payload=bytes(payload),
        headers=_headers(headers),
        attempts=int(attempts),
        created_at=_dt(created_at),  # type: ignore[arg-type]
        status=status,
        last_error=last_error or "",
        abandoned=abandoned,
    )


@traced(
    "_insert",
    "_claim",
    "_mark_sent",
    "_release",
    "_mark_failed",
    "_status",
    "_dead",
    "_requeue",
    "_purge_dead",
    "_purge_sent",
    "_seen",
)
class DBOutbox(Outbox):
    """Messages as rows of ``toolkit_outbox_message``, claimed with row locks skipped."""

    adapter_name = "db"

    def __init__(self, database: Database, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: The :class:`~toolkit_batteries.db.Database` holding the tables.
        self.database = database
        self.dialect: str = database.dialect
        postgres = self.dialect == "postgresql"
        template = _CLAIM_PG if postgres else _CLAIM_SQLITE
        self._claim_sql = {
            relaxed: template.replace("{relax}", f", {_RELAX}" if relaxed and postgres else "")
            for relaxed in (False, True)
        }

    @classmethod
    def open(cls, ctx: OpenContext) -> DBOutbox:
        """Reach the database (borrowed or by ``dsn``); refuse it without the tables."""
        from toolkit_batteries.db import database_for, require_tables

        from ..models import InboxMessage, OutboxMessage

        settings = settings_from_options(ctx.options, instance=ctx.instance)
        check_tables(ctx.options, instance=ctx.instance)
        database = database_for(ctx)
        database.drop_if_broken(probe=True)
        require_tables(
            database, OutboxMessage, InboxMessage, service=ctx.service, instance=ctx.instance
        )
        return cls(database, settings, instance=ctx.instance, container=ctx.container)

    # ------------------------------------------------------------------ helpers

    def _guard(self) -> AbstractContextManager[None]:
        """Turn a lost or refused database connection into ServiceUnavailableError."""
        return self.database.unavailable("outbox", self.instance, "use the outbox's tables")

    def _atomic(self) -> Any:
        from django.db import transaction

        return transaction.atomic(using=self.database.alias)

    @property
    def _relaxed(self) -> bool:
        """Tell whether a relay statement may skip the WAL flush (outside a transaction)."""
        return self.dialect == "postgresql" and not self.database.django_connection.in_atomic_block

    # ------------------------------------------------------------------ producer

    def _insert(self, message: NewMessage) -> int:
        from ..models import OutboxMessage

        with self._guard():
            # The row is the message's fields; it is available as soon as it commits.
            row = OutboxMessage.objects.using(self.database.alias).create(
                **dataclasses.asdict(message), available_at=message.created_at
            )
            channel = self.settings.notify_channel
            if channel and self.dialect == "postgresql":
                # Delivered at commit, dropped on rollback: a relay LISTENing wakes at once.
                self.database.execute("SELECT pg_notify(%s, '')", (channel,))
        return int(row.pk)

    # ------------------------------------------------------------------ relay

    def _claim(
        self,
        owner: str,
        limit: int,
        now: float,
        lease: float,
        *,
        extra: str = "",
        extra_params: Sequence[Any] = (),
    ) -> list[Record]:
        sql = self._claim_sql[self._relaxed].replace("{extra}", extra)
        params = self._claim_params(owner, limit, now, lease, extra_params)
        if self.dialect == "postgresql":
            with self._guard():
                rows = self.database.fetch_all(sql, params)
            records = (_record(row, abandoned=bool(row[8])) for row in rows)
            return sorted(records, key=lambda record: record.row)
        from django.db import transaction

        with self._guard(), transaction.atomic(using=self.database.alias):
            abandoned = {
                int(found)
                for (found,) in self.database.fetch_all(
                    _ABANDONED_SQLITE.replace("{extra}", extra), params[2:]
                )
            }
            rows = self.database.fetch_all(sql, params)
        records = (_record(row, abandoned=int(row[0]) in abandoned) for row in rows)
        return sorted(records, key=lambda record: record.row)

    def _claim_params(
        self, owner: str, limit: int, now: float, lease: float, extra: Sequence[Any] = ()
    ) -> tuple[Any, ...]:
        """Return the claim's parameters in its statement's order (the batch's CTE first)."""
        if self.dialect == "postgresql":
            return (now, now, *extra, limit, now + lease, owner)
        return (now + lease, owner, now, now, *extra, limit)

    def _release(self, rows: list[int], owner: str, *, abandoned: bool) -> int:
        with self._guard():
            return _by_chunk(
                self.database.execute,
                f"UPDATE {MESSAGES} SET locked_until = %s, locked_by = '', "
                "attempts = attempts - 1 WHERE status = 'pending' AND locked_by = %s "
                "AND id IN {ids}",
                (ABANDONED if abandoned else 0.0, owner),
                rows,
            )

    def _mark_sent(self, rows: list[int], now: float) -> int:
        relax = f" FROM {_RELAX}" if self._relaxed else ""
        with self._guard():
            return _by_chunk(
                self.database.execute,
                f"UPDATE {MESSAGES} SET status = 'sent', sent_at = %s, locked_until = 0, "
                f"locked_by = ''{relax} WHERE status = 'pending' AND id IN {{ids}}",
                (now,),
                rows,
            )

    def _mark_failed(
        self, row: int, owner: str, error: str, retry_at: float, dead: bool, now: float
    ) -> bool:
        status = "dead" if dead else "pending"
        with self._guard():
            return (
                self.database.execute(
                    f"UPDATE {MESSAGES} SET status = %s, last_error = %s, available_at = %s, "
                    "locked_until = 0, locked_by = '' "
                    "WHERE id = %s AND status = 'pending' AND locked_by = %s",
                    (status, error, retry_at, row, owner),
                )
                == 1
            )

    # ------------------------------------------------------------------ operations

    def _status(self, now: float) -> Status:
        with self._guard():
            counts = dict(
                self.database.fetch_all(f"SELECT status, count(*) FROM {MESSAGES} GROUP BY status")
            )
            oldest = self.database.fetch_value(
                f"SELECT min(created_at) FROM {MESSAGES} WHERE status = 'pending'"
            )
            last = self.database.fetch_one(
                f"SELECT last_error FROM {MESSAGES} WHERE status <> 'sent' AND last_error <> '' "
                "ORDER BY id DESC LIMIT 1"
            )
        age = max(now - float(oldest), 0.0) if oldest is not None else 0.0
        return Status(
            pending=int(counts.get("pending", 0)),
            processed=int(counts.get("sent", 0)),
            failed=int(counts.get("dead", 0)),
            last_error=last[0] if last else "",
            oldest_pending=age,
            stalled=age > STALL_AFTER,
        )

    def _dead(self, limit: int) -> list[Record]:
        with self._guard():
            rows = self.database.fetch_all(
                f"SELECT {_COLUMNS}, last_error FROM {MESSAGES} WHERE status = 'dead' "
                "ORDER BY id LIMIT %s",
                (limit,),
            )
        return [_record(row, "dead", row[8]) for row in rows]

    def _requeue(self, rows: list[int] | None, now: float) -> int:
        sql = (
            f"UPDATE {MESSAGES} SET status = 'pending', attempts = 0, available_at = %s, "
            "locked_until = 0, locked_by = '' WHERE status = 'dead'"
        )
        with self._guard(), self.database.transaction() as tx:
            if rows is None:
                return tx.execute(sql, (now,))
            return _by_chunk(tx.execute, sql + " AND id IN {ids}", (now,), rows)

    def _purge_dead(self, rows: list[int]) -> int:
        with self._guard(), self.database.transaction() as tx:
            return _by_chunk(
                tx.execute,
                f"DELETE FROM {MESSAGES} WHERE status = 'dead' AND id IN {{ids}}",
                (),
                rows,
            )

    def _purge_sent(self, cutoff: float) -> int:
        with self._guard(), self.database.transaction() as tx:
            deleted = tx.execute(
                f"DELETE FROM {MESSAGES} WHERE status = 'sent' AND sent_at < %s", (cutoff,)
            )
            tx.execute(f"DELETE FROM {INBOX} WHERE received_at < %s", (cutoff,))
        return deleted

    def _seen(self, consumer: str, message_id: str, now: float) -> bool:
        with self._guard():
            inserted = self.database.execute(
                f"INSERT INTO {INBOX} (consumer, message_id, received_at) VALUES (%s, %s, %s) "
                "ON CONFLICT (consumer, message_id) DO NOTHING",
                (consumer, message_id, now),
            )
        return inserted == 0

    def ping(self) -> None:
        """Check that the database answers (``/readyz``)."""
        self.database.ping()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<{type(self).__name__} outbox.{self.instance} {self.dialect} {state}>"
