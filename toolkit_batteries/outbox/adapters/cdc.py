"""The ``cdc`` adapter: the relay reads new outbox rows from PostgreSQL's logical decoding.

``publish`` writes the same row as ``db`` (in the caller's transaction); the relay does
not poll the table for new rows but reads the committed inserts of
``toolkit_outbox_message`` from a logical replication slot (``slot``, plugin
``pgoutput``) through a publication (``publication``, inserts only), so a commit is seen
once it is in the WAL, in commit order, without scanning the table:

1. ``pg_logical_slot_peek_binary_changes`` returns whole transactions; the relay decodes
   the pgoutput messages (Begin, Relation, Insert, Commit) into each transaction's new
   rows' ids. The server counts BEGIN and COMMIT as changes too, so the relay peeks again
   with a larger count until the transactions hold ``batch_size`` rows or the slot is
   drained: a batch of one-row transactions is ``batch_size`` rows, not a third of it;
2. those rows are claimed and leased like ``db`` claims them (a row another relay or an
   earlier run already holds is skipped), published and marked sent. Whole transactions
   fill the batch; the rest of it comes from the next transaction, which stays
   unconfirmed (its rows are seen again and skipped as sent);
3. ``pg_replication_slot_advance`` then confirms the whole transactions of the batch: a
   relay killed before this step reads the same changes again (at least once).

Retries of failed publishes and rows the slot never showed (published before the slot
existed, or skipped while still leased by a killed relay) are picked up by a sweep of the
table for pending rows that were attempted before or are older than ``lock_seconds``.

Transactional logical messages whose prefix is ``prefix`` (``SELECT
pg_logical_emit_message(true, 'toolkit_outbox', '{"topic": ..., "payload": {...}}')``,
from a trigger or another program) become outbox rows too, so SQL can publish without
Django. One slot has one reader: run one ``cdc`` relay per slot.

The server needs ``wal_level = logical``. The relay creates the publication and the slot
when they are missing (the first time it runs, never at open); a slot keeps WAL on the
server until it is read, so drop it (``SELECT pg_drop_replication_slot('<slot>')``) when
the relay is retired.
"""

from __future__ import annotations

import json
import re
import struct
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError
from toolkit_batteries.core.tracing import traced

from ..base import NewMessage, Record, check_topic, encode_payload
from .db import ID_CHUNK, MESSAGES, DBOutbox, _in

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = ["CDCOutbox", "Transaction", "decode_pgoutput", "decode_transactions"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


class _Reader:
    """A cursor over one pgoutput message."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def byte(self) -> int:
        self.at += 1
        return self.data[self.at - 1]

    def int16(self) -> int:
        (value,) = struct.unpack_from("!h", self.data, self.at)
        self.at += 2
        return int(value)

    def int32(self) -> int:
        (value,) = struct.unpack_from("!i", self.data, self.at)
        self.at += 4
        return int(value)

    def int64(self) -> int:
        (value,) = struct.unpack_from("!q", self.data, self.at)
        self.at += 8
        return int(value)

    def string(self) -> str:
        end = self.data.index(b"\x00", self.at)
        value = self.data[self.at : end].decode()
        self.at = end + 1
        return value

    def raw(self, size: int) -> bytes:
        value = self.data[self.at : self.at + size]
        self.at += size
        return value


@dataclass
class Transaction:
    """One decoded transaction of the slot (or a non-transactional logical message).

    ``token`` is the LSN that confirms it (its COMMIT's); ``ids`` the outbox rows it
    inserted, in order; ``emitted`` the contents of its logical messages with the prefix.
    """

    token: str
    ids: list[int] = field(default_factory=list)
    emitted: list[bytes] = field(default_factory=list)

    @property
    def size(self) -> int:
        """Return the messages it brings to a batch: inserted rows and emitted messages."""
        return len(self.ids) + len(self.emitted)


def _decode_one(
    data: bytes, relations: dict[int, tuple[str, list[str]]], prefix: str
) -> tuple[str, int | None, bytes | None]:
    """Decode one pgoutput message: (kind, new outbox row id, emitted content)."""
    reader = _Reader(bytes(data))
    kind = chr(reader.byte())
    if kind == "R":
        oid = reader.int32()
        reader.string()  # namespace
        name = reader.string()
        reader.byte()  # replica identity
        columns = []
        for _ in range(reader.int16()):
            reader.byte()  # flags
            columns.append(reader.string())
            reader.int32()  # type oid
            reader.int32()  # type modifier
        relations[oid] = (name, columns)
    elif kind == "I":
        oid = reader.int32()
        reader.byte()  # 'N': a new tuple
        name, columns = relations.get(oid, ("", []))
        values = _tuple(reader)
        if name == MESSAGES and "id" in columns:
            value = values[columns.index("id")]
            if value is not None:
                return kind, int(value), None
    elif kind == "M":
        reader.byte()  # flags: 1 = transactional
        reader.int64()  # lsn
        found = reader.string()
        content = reader.raw(reader.int32())
        if found == prefix:
            return kind, None, content
    return kind, None, None


def decode_transactions(
    rows: Sequence[tuple[str, bytes]], relations: dict[int, tuple[str, list[str]]], prefix: str
) -> list[Transaction]:
    """Return the transactions of peeked ``(lsn, data)`` rows, in commit order.

    ``relations`` maps relation oids to (table name, column names); Relation messages
    update it (pgoutput sends one before the first change of a table per session). A
    logical message outside a transaction (non-transactional) is a unit of its own, and
    a transaction without outbox rows is kept too: confirming it moves the slot on.
    """
    done: list[Transaction] = []
    current: Transaction | None = None
    for lsn, data in rows:
        kind, row_id, content = _decode_one(data, relations, prefix)
        if kind == "B":
            current = Transaction(lsn)
            continue
        unit = current if current is not None else Transaction(lsn)
        if row_id is not None:
            unit.ids.append(row_id)
        if content is not None:
            unit.emitted.append(content)
        if kind == "C" and current is not None:
            current.token = lsn
            done.append(current)
            current = None
        elif current is None:  # confirmed even when it brings nothing (another prefix)
            done.append(unit)
    return done


def decode_pgoutput(
    messages: list[bytes], relations: dict[int, tuple[str, list[str]]], prefix: str
) -> tuple[list[int], list[bytes]]:
    """Return (new outbox row ids, contents of logical messages with ``prefix``).

    ``relations`` maps relation oids to (table name, column names); Relation messages
    update it (pgoutput sends one before the first change of a table per session).
    """
    ids: list[int] = []
    emitted: list[bytes] = []
    for data in messages:
        _kind, row_id, content = _decode_one(data, relations, prefix)
        if row_id is not None:
            ids.append(row_id)
        if content is not None:
            emitted.append(content)
    return ids, emitted


def _tuple(reader: _Reader) -> list[str | None]:
    values: list[str | None] = []
    for _ in range(reader.int16()):
        kind = chr(reader.byte())
        if kind == "t":
            values.append(reader.raw(reader.int32()).decode())
        elif kind == "b":
            reader.raw(reader.int32())
            values.append(None)
        else:  # 'n' null, 'u' unchanged TOAST value
            values.append(None)
    return values


class _Batch:
    """One relay batch filled from the slot's transactions, in commit order.

    Whole transactions go in while they fit (their rows claimed together at the end);
    the first that does not fit fills the rest of the batch and is confirmed only when
    none of its rows is left (a claim returning less than asked for took all it could).
    """

    def __init__(self, outbox: CDCOutbox, owner: str, limit: int, now: float, lease: float) -> None:
        self.outbox, self.owner, self.limit, self.now, self.lease = outbox, owner, limit, now, lease
        self.records: list[Record] = []
        self.whole: list[int] = []  # rows of the transactions taken whole
        self.handled = 0  # transactions of the stream taken into this batch
        self.token: str | None = None  # the LSN confirming them
        self.full = False

    def _claim(self, ids: Sequence[int], limit: int) -> list[Record]:
        return self.outbox._claim_rows(self.owner, ids, limit, self.now, self.lease)

    def take(self, transaction: Transaction) -> bool:
        """Add ``transaction`` to the batch; return False once the batch is full."""
        room = self.limit - len(self.records) - len(self.whole)
        if room <= 0 and self.whole:  # some may be sent already (a batch seen before)
            room = self.limit - len(self.finish())
        if room <= 0:
            self.full = True
            return False
        if transaction.size <= room:
            self.whole += transaction.ids + self.outbox._emit(transaction, self.now)
        else:
            self.finish()
            room = self.limit - len(self.records)
            taken = self._claim(transaction.ids, room)
            self.records += taken
            if len(taken) == room:  # rows of it may be left: not confirmed
                self.full = True
                return False
            self.records += self._claim(self.outbox._emit(transaction, self.now), room - len(taken))
        self.handled += 1
        self.token = transaction.token
        return True

    def finish(self) -> list[Record]:
        """Claim the rows of the transactions taken whole; return the batch's records."""
        if self.whole:
            self.records += self._claim(self.whole, len(self.whole))
            self.whole = []
        return self.records


@traced("ensure_capture", "_begin_batch", "_end_batch")
class CDCOutbox(DBOutbox):
    """The ``db`` outbox whose relay learns of new rows from a logical replication slot."""

    adapter_name = "cdc"

    def __init__(self, *args: Any, slot: str, publication: str, prefix: str, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.slot = slot
        self.publication = publication
        self.prefix = prefix
        self._ready = False
        self._relations: dict[int, tuple[str, list[str]]] = {}

    @classmethod
    def open(cls, ctx: OpenContext) -> CDCOutbox:  # type: ignore[override]
        """Open as ``db`` does; refuse SQLite and names that are not SQL identifiers."""
        options = ctx.options
        for name in ("slot", "publication"):
            if not _IDENT.fullmatch(str(getattr(options, name) or "")):
                raise InvalidOptionsError(
                    "outbox",
                    name,
                    "must be a SQL identifier (letters, digits, _)",
                    instance=ctx.instance,
                )
        if not str(options.prefix or ""):
            raise InvalidOptionsError(
                "outbox", "prefix", "must not be empty", instance=ctx.instance
            )
        base = DBOutbox.open(ctx)
        if base.dialect != "postgresql":
            raise InvalidOptionsError(
                "outbox",
                "dsn",
                "cdc needs PostgreSQL (logical decoding); use the db adapter on SQLite",
                instance=ctx.instance,
            )
        return cls(
            base.database,
            base.settings,
            instance=ctx.instance,
            container=ctx.container,
            slot=str(options.slot),
            publication=str(options.publication),
            prefix=str(options.prefix),
        )

    # ------------------------------------------------------------------ setup

    def ensure_capture(self) -> None:
        """Create the publication and the slot if missing; check ``wal_level``.

        Called by the relay before its first batch (never at open); safe to call again.
        """
        database = self.database
        with self._guard():
            level = database.fetch_value("SHOW wal_level")
            if level != "logical":
                raise ConfigurationError(
                    f"outbox.{self.instance}: the cdc adapter needs the server's wal_level "
                    f'to be "logical" (it is "{level}"); set it and restart PostgreSQL, '
                    "or use the db adapter"
                )
            if not database.fetch_value(
                "SELECT count(*) FROM pg_publication WHERE pubname = %s", (self.publication,)
            ):
                database.execute(
                    f'CREATE PUBLICATION "{self.publication}" FOR TABLE {MESSAGES} '
                    "WITH (publish = 'insert')"
                )
            if not database.fetch_value(
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = %s", (self.slot,)
            ):
                database.fetch_value(
                    "SELECT lsn::text FROM pg_create_logical_replication_slot(%s, 'pgoutput')",
                    (self.slot,),
                )
        self._ready = True

    # ------------------------------------------------------------------ relay

    def _peek(self, wanted: int) -> tuple[list[Transaction], bool]:
        """Return the slot's first transactions, about ``wanted`` changes, and if that is all.

        Peeking reads from the slot's confirmed position, so a larger ``wanted`` returns
        the same transactions first. The server stops once it returned ``wanted`` rows or
        more (checked after each transaction): fewer rows means the slot ran dry.
        """
        with self._guard():
            rows = self.database.fetch_all(
                "SELECT lsn::text, data FROM pg_logical_slot_peek_binary_changes("
                "%s, NULL, %s, 'proto_version', '1', 'publication_names', %s, "
                "'messages', 'true')",
                (self.slot, wanted, self.publication),
            )
        transactions = decode_transactions(
            [(lsn, bytes(data)) for lsn, data in rows], self._relations, self.prefix
        )
        return transactions, len(rows) < wanted

    def _claim_rows(
        self, owner: str, ids: Sequence[int], limit: int, now: float, lease: float
    ) -> list[Record]:
        """Claim up to ``limit`` of the rows ``ids`` (lowest first; held ones skipped)."""
        records: list[Record] = []
        unique = sorted(set(ids))
        for start in range(0, len(unique), ID_CHUNK):
            if len(records) >= limit:
                break
            chunk = unique[start : start + ID_CHUNK]
            wanted = min(len(chunk), limit - len(records))
            records += self._claim(
                owner, wanted, now, lease, extra=f" AND id IN {_in(chunk)}", extra_params=chunk
            )
        return records

    def _emit(self, transaction: Transaction, now: float) -> list[int]:
        """Insert the transaction's logical messages as outbox rows; return their ids."""
        inserted = (self._insert_emitted(content, now) for content in transaction.emitted)
        return [row for row in inserted if row is not None]

    def _begin_batch(
        self, owner: str, limit: int, now: float, lease: float
    ) -> tuple[list[Record], Any]:
        """Claim ``limit`` rows from the slot's transactions; the token confirms whole ones.

        The server counts BEGIN and COMMIT as changes too, and rows of a transaction
        seen before may be sent already, so the slot is peeked again, for twice as many
        changes, while the batch has room and the slot has more.
        """
        if not self._ready:
            self.ensure_capture()
        batch = _Batch(self, owner, limit, now, lease)
        wanted = 3 * limit + 2
        while True:
            transactions, drained = self._peek(wanted)
            for transaction in transactions[batch.handled :]:
                if not batch.take(transaction):
                    break
            if batch.full or drained:
                break
            wanted *= 2
        records = batch.finish()
        if len(records) < limit:
            records += self._claim(
                owner,
                limit - len(records),
                now,
                lease,
                extra=" AND (attempts > 0 OR created_at <= %s)",
                extra_params=(now - lease,),
            )
        return sorted(records, key=lambda record: record.row), batch.token

    def _end_batch(self, token: Any) -> None:
        if token is None:
            return
        with self._guard():
            self.database.fetch_value(
                "SELECT end_lsn::text FROM pg_replication_slot_advance(%s, %s::pg_lsn)",
                (self.slot, token),
            )

    def _insert_emitted(self, content: bytes, now: float) -> int | None:
        """Turn a logical message with ``prefix`` into an outbox row (bad ones are logged)."""
        from ..relay import logger

        try:
            data = json.loads(content)
            topic = check_topic(data["topic"])
            payload = data.get("payload", {})
            body = payload.encode() if isinstance(payload, str) else encode_payload(payload)
            key = str(data.get("key") or "")
            headers = {str(k): str(v) for k, v in dict(data.get("headers") or {}).items()}
        except (ValueError, TypeError, KeyError, AttributeError):
            logger.warning(
                "outbox.%s: ignored a logical message with prefix %s: not an outbox message",
                self.instance,
                self.prefix,
            )
            return None
        return self._insert(NewMessage(str(uuid.uuid4()), topic, key, body, headers, now))

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<CDCOutbox outbox.{self.instance} slot={self.slot} {state}>"
