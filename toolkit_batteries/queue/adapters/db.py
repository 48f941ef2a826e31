"""The ``db`` adapter: durable queues in SQL, on PostgreSQL or SQLite, through Django.

For Redis-free deployments with several workers. The tables are the models of
:mod:`toolkit_batteries.queue.models`: live messages in ``toolkit_queue_message``, dead
ones in ``toolkit_queue_dead_letter``, both created by ``manage.py migrate``; opening
checks that they exist and never runs DDL.

Every statement runs on ``django.db.connections[alias]`` (the
:class:`~toolkit_batteries.db.Database` of :func:`~toolkit_batteries.db.database_for`), so
a push inside the caller's ``transaction.atomic()`` on that alias commits or rolls back
with the caller's rows: a transactional outbox. An empty ``dsn`` borrows the ``db``
service (the project's database); a ``dsn`` names a database of its own, reached through
the ``DATABASES`` alias of that database (``default`` when it is the project's).

The claim is raw SQL, because it earns it:

* PostgreSQL: ``UPDATE ... WHERE id = (SELECT id ... ORDER BY visible_at, id LIMIT 1
  FOR UPDATE SKIP LOCKED) RETURNING ...``: one statement; concurrent workers skip each
  other's rows instead of queueing behind them.
* SQLite: the same ``UPDATE ... RETURNING`` without the locking clause: a write
  statement takes SQLite's one write lock before it reads, so it is atomic as it stands.

An expired lease needs no sweeper: a leased row whose ``visible_at`` (the lease end) has
passed is claimable again. ``pop`` polls while the topic is empty, backing off from 1 ms
to 100 ms between looks (a push in the same process wakes it at once).

Outside a transaction, claims and settlements on PostgreSQL skip the WAL flush
(``synchronous_commit`` off for that one statement): losing one in a database crash only
means a message is delivered again, which at-least-once allows. Pushes are never
relaxed (a lost push is a lost message), and inside a caller's transaction every
statement keeps the caller's durability.

Message ids are the rows' ids; an id that is not plain ASCII digits (``"²"``, the
Arabic-Indic ``"\\u0661"``, ``" 7"``) names no message, whatever ``int()`` would make of
it. Times come from ``queue.clock``.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.tracing import traced

from ..base import REMOTE_OPERATIONS, DeadMessage, Message, Queue, to_datetime

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext
    from toolkit_batteries.db import Database

__all__ = [
    "DEAD_LETTERS",
    "DEFAULT_TABLE",
    "MESSAGES",
    "DBQueue",
    "JoinedClaim",
    "JoinedMessage",
    "check_table_name",
    "parse_id",
    "purge_dead_letters",
    "requeue_dead_letters",
]

#: The live messages' table (:class:`~toolkit_batteries.queue.models.Message`).
MESSAGES = "toolkit_queue_message"
#: The dead lists' table (:class:`~toolkit_batteries.queue.models.DeadLetter`).
DEAD_LETTERS = "toolkit_queue_dead_letter"
#: The only value the deprecated ``table`` option may still hold.
DEFAULT_TABLE = MESSAGES
#: Longest pause between two looks at an empty topic, in seconds.
MAX_POLL_INTERVAL = 0.1
#: Ids per statement when requeueing or purging chosen dead messages.
ID_CHUNK = 500
#: Largest id a BIGINT column holds.
MAX_ID = 2**63 - 1

_ID = re.compile(r"[0-9]{1,19}")

# A delivery holds its lease until its deadline (visible_at while leased) passes.
_HOLDS_LEASE = "id = %s AND topic = %s AND attempts = %s AND leased = TRUE AND visible_at > %s"
_CLAIM = f"""UPDATE {MESSAGES} SET visible_at = %s, attempts = attempts + 1, leased = TRUE{{relax}}
    WHERE id = (
        SELECT id FROM {MESSAGES}
        WHERE topic = %s AND visible_at <= %s
        ORDER BY visible_at, id LIMIT 1{{lock}}
    )
    RETURNING id, body, attempts, enqueued_at"""
_PUSH = (
    f"INSERT INTO {MESSAGES} (topic, body, attempts, enqueued_at, visible_at, leased) "
    "VALUES (%s, %s, 0, %s, %s, FALSE) RETURNING id"
)
_ACK = f"DELETE FROM {MESSAGES}{{using}} WHERE {_HOLDS_LEASE}"
_NACK = f"UPDATE {MESSAGES} SET visible_at = %s, leased = FALSE{{relax}} WHERE {_HOLDS_LEASE}"
_DEAD_COLUMNS = "id, topic, body, attempts, enqueued_at, died_at, reason"
# PostgreSQL moves a message to the dead list in one statement; SQLite in two, inside
# one write transaction (it has no data-modifying WITH).
_DEAD_PG = (
    f"WITH moved AS (DELETE FROM {MESSAGES}{{using}} WHERE {_HOLDS_LEASE} "
    "RETURNING id, topic, body, attempts, enqueued_at) "
    f"INSERT INTO {DEAD_LETTERS} ({_DEAD_COLUMNS}) "
    "SELECT id, topic, body, attempts, enqueued_at, %s, %s FROM moved"
)
_DEAD_SQLITE = (
    f"INSERT INTO {DEAD_LETTERS} ({_DEAD_COLUMNS}) "
    f"SELECT id, topic, body, attempts, enqueued_at, %s, %s FROM {MESSAGES} "
    f"WHERE {_HOLDS_LEASE}"
)
# PostgreSQL: a one-row FROM / USING item that turns synchronous_commit off for the rest
# of the (one-statement) transaction, without a round trip of its own.
_RELAX_ITEM = "(SELECT set_config('synchronous_commit', 'off', true)) AS relax"


class JoinedClaim(Protocol):
    """A write another battery makes in the same statement as a pop (:meth:`DBQueue.join_claim`)."""

    def sql(self, source: str) -> str:
        """Return a data-modifying statement reading the popped row from ``source``.

        ``source`` has the columns ``id, body, attempts, enqueued_at``; the statement
        returns at most one row, whose first column is never ``NULL``.
        """
        ...

    def params(self, now: float) -> Sequence[Any]:
        """Return the statement's parameters for a pop at ``now``."""
        ...


@dataclass(frozen=True, slots=True, repr=False)
class JoinedMessage(Message):
    """A delivery popped by a statement that also ran a :class:`JoinedClaim`.

    ``joined`` is the row that claim returned, or ``None`` when it wrote nothing (the
    message was not one it acts on, or its row was not free).
    """

    joined: tuple[Any, ...] | None


def check_table_name(name: str, *, instance: str = "default") -> str:
    """Return the messages table; refuse a ``table`` option naming any other table.

    The tables are models now (``manage.py migrate`` creates them under fixed names), so
    the option can no longer move them; it is accepted empty or as the model's name.
    """
    table = str(name or "").strip()
    if table and table != MESSAGES:
        raise InvalidOptionsError(
            "queue",
            "table",
            f"is no longer configurable: the db queue uses the migrated tables {MESSAGES} "
            f"and {DEAD_LETTERS}; leave it empty",
            instance=instance,
        )
    return MESSAGES


def parse_id(value: Any) -> int | None:
    """Return the row id a message id names, or ``None`` when it names no row.

    Only 1 to 19 ASCII digits within BIGINT qualify: ``str.isdigit`` accepts ``"²"``
    (which ``int`` then refuses) and ``int`` accepts ``"\\u0661"``, ``" 7"`` and ``"1_0"``.
    """
    if type(value) is not str or not _ID.fullmatch(value):
        return None
    number = int(value)
    return number if number <= MAX_ID else None


def _dead_where(topic: str | None, ids: Sequence[int] | None) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if topic is not None:
        clauses.append("topic = %s")
        params.append(topic)
    if ids is not None:
        clauses.append(f"id IN ({', '.join(['%s'] * len(ids))})")
        params.extend(ids)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def _chunks(topic: str | None, ids: Iterable[int] | None) -> Iterator[tuple[str, list[Any]]]:
    """Yield (WHERE clause, params) for all of ``topic``, or ``ids`` in chunks."""
    if ids is None:
        yield _dead_where(topic, None)
        return
    numbers = list(ids)
    for start in range(0, len(numbers), ID_CHUNK):
        yield _dead_where(topic, numbers[start : start + ID_CHUNK])


def requeue_dead_letters(
    database: Database, now: float, *, topic: str | None = None, ids: Iterable[int] | None = None
) -> int:
    """Move dead letters (of ``topic``, or those with ``ids``) back to ready; return how many.

    A requeued message keeps its id and starts over (``attempts`` 0), visible at ``now``.
    Used by :meth:`DBQueue.requeue_dead` and the admin's "requeue" action. On PostgreSQL
    each chunk is one statement (``DELETE ... RETURNING`` feeding the ``INSERT``), so two
    concurrent requeues move each letter once.
    """
    total = 0
    insert = (
        f"INSERT INTO {MESSAGES} (id, topic, body, attempts, enqueued_at, visible_at, leased) "
        "SELECT id, topic, body, 0, enqueued_at, %s, FALSE FROM "
    )
    with database.transaction() as tx:
        for where, params in _chunks(topic, ids):
            if database.dialect == "postgresql":
                total += tx.execute(
                    f"WITH moved AS (DELETE FROM {DEAD_LETTERS}{where} "
                    "RETURNING id, topic, body, enqueued_at) " + insert + "moved",
                    (*params, now),
                )
            else:
                total += tx.execute(insert + DEAD_LETTERS + where, (now, *params))
                tx.execute(f"DELETE FROM {DEAD_LETTERS}{where}", params)
    return total


def purge_dead_letters(
    database: Database, *, topic: str | None = None, ids: Iterable[int] | None = None
) -> int:
    """Delete dead letters (of ``topic``, or those with ``ids``) for good; return how many."""
    total = 0
    with database.transaction() as tx:
        for where, params in _chunks(topic, ids):
            total += tx.execute(f"DELETE FROM {DEAD_LETTERS}{where}", params)
    return total


@traced(*REMOTE_OPERATIONS)
class DBQueue(Queue):
    """Messages as rows of a migrated table, claimed set-based with row locks skipped."""

    adapter_name = "db"

    def __init__(self, database: Database, options: Any, *, instance: str = "default") -> None:
        super().__init__(options, instance=instance)
        #: The :class:`~toolkit_batteries.db.Database` holding the tables.
        self.database = database
        self.table = check_table_name(str(getattr(options, "table", "") or ""), instance=instance)
        self.dead_table = DEAD_LETTERS
        self.dialect: str = database.dialect
        postgres = self.dialect == "postgresql"
        lock = "\n        FOR UPDATE SKIP LOCKED" if postgres else ""
        #: Statement name -> (plain SQL, relaxed SQL); they differ on PostgreSQL only.
        self._sql: dict[str, tuple[str, str]] = {}
        self._sql["push"] = (_PUSH, _PUSH)  # never relaxed: a lost push is a lost message
        for name, template in (
            ("claim", _CLAIM.replace("{lock}", lock)),
            ("ack", _ACK),
            ("nack", _NACK),
            ("dead", _DEAD_PG if postgres else _DEAD_SQLITE),
        ):
            plain = template.replace("{relax}", "").replace("{using}", "")
            relaxed = plain
            if postgres:
                relaxed = template.replace("{relax}", f" FROM {_RELAX_ITEM}")
                relaxed = relaxed.replace("{using}", f" USING {_RELAX_ITEM}")
            self._sql[name] = (plain, relaxed)
        #: Topic -> (the claim joined to its pops, the composed statement).
        self._joined: dict[str, tuple[JoinedClaim, str]] = {}
        # A local push wakes local pollers at once; other processes are seen by polling.
        self._pushed = threading.Condition()
        # Stateless, so one serves every call and thread (not one object per statement).
        self._unreachable = database.unavailable("queue", instance, "use the queue's tables")

    @classmethod
    def open(cls, ctx: OpenContext) -> DBQueue:
        """Reach the database (borrowed or by ``dsn``); refuse it without the tables."""
        from toolkit_batteries.db import database_for, require_tables

        from ..models import DeadLetter
        from ..models import Message as MessageRow

        check_table_name(str(ctx.options.table or ""), instance=ctx.instance)
        database = database_for(ctx)
        database.drop_if_broken(probe=True)
        require_tables(database, MessageRow, DeadLetter, service=ctx.service, instance=ctx.instance)
        return cls(database, ctx.options, instance=ctx.instance)

    def _guard(self) -> AbstractContextManager[None]:
        """Turn a lost or refused database connection into ServiceUnavailableError."""
        return self._unreachable

    def _one(self, name: str, params: Sequence[Any], *, fetch: bool = False) -> Any:
        """Run statement ``name`` (one statement, its own transaction unless in one).

        Inside the caller's ``atomic`` block it joins that transaction through Django's
        cursor. Outside one, Django's connection is in autocommit mode, so the statement
        commits by itself in one round trip, in its relaxed form; on PostgreSQL it then
        runs as a prepared statement on the same connection (Django binds parameters
        client-side and never prepares, which costs the workers a third of their
        throughput), its errors still translated by Django.
        """
        plain, relaxed = self._sql[name]
        database = self.database
        with self._unreachable:
            conn = database.django_connection
            if conn.in_atomic_block:
                return (
                    database.fetch_one(plain, params) if fetch else database.execute(plain, params)
                )
            if fetch:
                return database.fetch_one_prepared(relaxed, params, connection=conn)
            return database.execute_prepared(relaxed, params, connection=conn)

    # ------------------------------------------------------------------ operations

    def _wake(self, everyone: bool = False) -> None:
        with self._pushed:
            if everyone:
                self._pushed.notify_all()
            else:
                self._pushed.notify()

    def _push(self, topic: str, body: bytes, delay: float) -> str:
        now = self.clock()
        (message_id,) = self._one("push", (topic, body, now, now + delay), fetch=True)
        if delay <= 0:
            self._wake()
        return str(message_id)

    def _push_many(self, topic: str, bodies: list[bytes], delay: float) -> list[str]:
        now = self.clock()
        ids: list[int] = []
        with self._guard(), self.database.transaction() as tx:  # one commit for them all
            for start in range(0, len(bodies), ID_CHUNK):
                chunk = bodies[start : start + ID_CHUNK]
                rows = ", ".join(["(%s, %s, 0, %s, %s, FALSE)"] * len(chunk))
                params = [v for body in chunk for v in (topic, body, now, now + delay)]
                found = tx.fetch_all(
                    f"INSERT INTO {MESSAGES} "
                    "(topic, body, attempts, enqueued_at, visible_at, leased) "
                    f"VALUES {rows} RETURNING id",
                    params,
                )
                # Ids are drawn row by row in VALUES order; RETURNING order is not promised.
                ids.extend(sorted(int(row[0]) for row in found))
        if delay <= 0:
            self._wake(everyone=True)
        return [str(message_id) for message_id in ids]

    # ------------------------------------------------------------------ joined statements

    def push_from(self, source: str, topic: str, body: bytes) -> tuple[str, tuple[Any, ...]]:
        """Return an ``INSERT`` pushing ``body`` once per row of ``source``, and its params.

        Why: a battery on the same database (a workflow step) carries its next job in
        its own write statement (a ``WITH`` item reading ``source``, one of its earlier
        items), one round trip instead of two, committed or rolled back with it. The
        caller runs the statement and calls :meth:`notify_pushed` after it.
        """
        self._check_open()
        if type(body) is not bytes:
            raise TypeError("body must be bytes")
        now = self.clock()
        sql = (
            f"INSERT INTO {MESSAGES} (topic, body, attempts, enqueued_at, visible_at, leased) "
            f"SELECT %s, %s, 0, %s, %s, FALSE FROM {source} RETURNING id"
        )
        return sql, (self._topic_ok(topic), body, now, now)

    def ack_from(self, message: Message, source: str) -> tuple[str, tuple[Any, ...]] | None:
        """Return a ``DELETE`` acknowledging ``message`` if ``source`` has a row, and its params.

        The acknowledgement of :meth:`push_from`'s statement: it commits with the
        caller's write, so the message is gone exactly when that write happened.
        ``None`` when the id names no row (the caller then leaves the ack to the worker).
        """
        lease = self._lease(message, self.clock())
        if lease is None:
            return None
        sql = (
            f"DELETE FROM {MESSAGES} WHERE {_HOLDS_LEASE} "
            f"AND EXISTS (SELECT 1 FROM {source}) RETURNING id"
        )
        return sql, lease

    def notify_pushed(self) -> None:
        """Wake this process's waiting pops after a push made by another statement."""
        self._wake()

    def join_claim(self, topic: str, claim: JoinedClaim) -> bool:
        """Run ``claim``'s write in the same statement as every later pop of ``topic``.

        Why: a workflow step's job is popped, then its run is claimed: two round trips
        and two commits before the step can start. Joined, the pop's statement claims the
        run the message names (a writing ``WITH`` item reading the popped row), and the
        pop returns a :class:`JoinedMessage` carrying the claim's row (issue 27). The
        claim must act only on messages it recognises and never fail on a body it does
        not: any error would fail the pop of every message of the topic.

        PostgreSQL only, and only for pops outside a transaction (inside one the pop
        stays plain). One claim per topic: return whether ``claim`` is the one joined.
        """
        if self.dialect != "postgresql":
            return False
        topic = self._topic_ok(topic)
        known = self._joined.get(topic)
        if known is None:
            relaxed = self._sql["claim"][1]
            sql = (
                f"WITH popped AS ({relaxed}), joined AS ({claim.sql('popped')}) "
                "SELECT popped.id, popped.body, popped.attempts, popped.enqueued_at, joined.* "
                "FROM popped LEFT JOIN joined ON true"
            )
            known = self._joined.setdefault(topic, (claim, sql))
        return known[0] is claim

    def _claim(self, topic: str, lease: float) -> Message | None:
        now = self.clock()
        params = (now + lease, topic, now)
        joined = self._joined.get(topic)
        if joined is not None:
            claim, sql = joined
            database = self.database
            with self._unreachable:
                conn = database.django_connection
                if conn.in_atomic_block:
                    joined = None  # inside the caller's transaction the pop stays plain
                else:
                    params += tuple(claim.params(now))
                    row = database.fetch_one_prepared(sql, params, connection=conn)
        if joined is None:
            row = self._one("claim", params, fetch=True)
        if row is None:
            return None
        message_id, body, attempts, enqueued_at = row[:4]
        fields = (str(message_id), topic, bytes(body), int(attempts), to_datetime(enqueued_at))
        if joined is None:
            return Message(*fields)
        return JoinedMessage(*fields, None if row[4] is None else tuple(row[4:]))

    def _pop(self, topic: str, wait: float, lease: float) -> Message | None:
        give_up = time.monotonic() + wait
        interval = 0.001
        while True:
            self._check_open()
            message = self._claim(topic, lease)
            if message is not None:
                return message
            remaining = give_up - time.monotonic()
            if remaining <= 0:
                return None
            with self._pushed:
                self._pushed.wait(min(interval, remaining))
            interval = min(interval * 2, MAX_POLL_INTERVAL)

    def _lease(self, message: Message, now: float) -> tuple[Any, ...] | None:
        """Return the parameters matching this delivery's row, or None if it names none."""
        number = parse_id(message.id)
        return None if number is None else (number, message.topic, message.attempts, now)

    def _ack(self, message: Message) -> bool:
        lease = self._lease(message, self.clock())
        return lease is not None and self._one("ack", lease) == 1

    def _nack(self, message: Message, delay: float) -> bool:
        now = self.clock()
        lease = self._lease(message, now)
        if lease is None:
            return False
        changed = self._one("nack", (now + delay, *lease)) == 1
        if changed and delay <= 0:
            self._wake()
        return changed

    def _dead(self, message: Message, reason: str) -> bool:
        now = self.clock()
        lease = self._lease(message, now)
        if lease is None:
            return False
        if self.dialect == "postgresql":
            return self._one("dead", (*lease, now, reason)) == 1
        with self._guard(), self.database.transaction() as tx:
            if tx.execute(self._sql["dead"][0], (now, reason, *lease)) != 1:
                return False
            tx.execute(f"DELETE FROM {MESSAGES} WHERE id = %s", (lease[0],))
        return True

    def _dead_messages(self, topic: str, limit: int) -> list[DeadMessage]:
        with self._guard():
            rows = self.database.fetch_all(
                f"SELECT id, body, attempts, enqueued_at, reason, died_at FROM {DEAD_LETTERS} "
                "WHERE topic = %s ORDER BY died_at, id LIMIT %s",
                (topic, limit),
            )
        return [
            DeadMessage(
                str(message_id),
                topic,
                bytes(body),
                int(attempts),
                to_datetime(enqueued_at),
                reason or "",
                to_datetime(died),
            )
            for message_id, body, attempts, enqueued_at, reason, died in rows
        ]

    @staticmethod
    def _row_ids(ids: list[str] | None) -> list[int] | None:
        if ids is None:
            return None
        return [number for number in map(parse_id, ids) if number is not None]

    def _requeue_dead(self, topic: str, ids: list[str] | None) -> int:
        numbers = self._row_ids(ids)
        if numbers == []:
            return 0
        with self._guard():
            changed = requeue_dead_letters(self.database, self.clock(), topic=topic, ids=numbers)
        if changed:
            self._wake(everyone=True)
        return changed

    def _purge_dead(self, topic: str, ids: list[str] | None) -> int:
        numbers = self._row_ids(ids)
        if numbers == []:
            return 0
        with self._guard():
            return purge_dead_letters(self.database, topic=topic, ids=numbers)

    def _size(self, topic: str) -> int:
        with self._guard():
            return int(
                self.database.fetch_value(
                    f"SELECT count(*) FROM {MESSAGES} WHERE topic = %s "
                    "AND (leased = FALSE OR visible_at <= %s)",
                    (topic, self.clock()),
                )
            )

    def _close(self) -> None:
        self._wake(everyone=True)

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<DBQueue queue.{self.instance} {self.dialect} {self.database.alias} {state}>"
