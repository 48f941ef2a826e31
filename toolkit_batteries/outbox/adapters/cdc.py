"""The ``cdc`` adapter: the relay reads new outbox rows from PostgreSQL's logical decoding.

``publish`` writes the same row as ``db`` (in the caller's transaction); the relay does
not poll the table for new rows but reads the committed inserts of
``toolkit_outbox_message`` from a logical replication slot (``slot``, plugin
``pgoutput``) through a publication (``publication``, inserts only), so a commit is seen
once it is in the WAL, in commit order, without scanning the table:

1. ``pg_logical_slot_peek_binary_changes`` returns up to about ``batch_size`` changes
   (whole transactions); the relay decodes the pgoutput messages (Relation, Insert) into
   the new rows' ids;
2. those rows are claimed and leased like ``db`` claims them (a row another relay or an
   earlier run already holds is skipped), published and marked sent;
3. ``pg_replication_slot_advance`` then confirms the batch: a relay killed before this
   step reads the same changes again (at least once).

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
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError
from toolkit_batteries.core.tracing import traced

from ..base import Record, check_topic, encode_payload
from .db import MESSAGES, DBOutbox

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = ["CDCOutbox", "decode_pgoutput"]

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
                    ids.append(int(value))
        elif kind == "M":
            reader.byte()  # flags: 1 = transactional
            reader.int64()  # lsn
            found = reader.string()
            content = reader.raw(reader.int32())
            if found == prefix:
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

    def _begin_batch(
        self, owner: str, limit: int, now: float, lease: float
    ) -> tuple[list[Record], Any]:
        if not self._ready:
            self.ensure_capture()
        with self._guard():
            rows = self.database.fetch_all(
                "SELECT lsn::text, data FROM pg_logical_slot_peek_binary_changes("
                "%s, NULL, %s, 'proto_version', '1', 'publication_names', %s, "
                "'messages', 'true')",
                (self.slot, limit, self.publication),
            )
        ids, emitted = decode_pgoutput(
            [bytes(row[1]) for row in rows], self._relations, self.prefix
        )
        for content in emitted:
            row = self._insert_emitted(content, now)
            if row is not None:
                ids.append(row)
        records: list[Record] = []
        if ids:
            unique = sorted(set(ids))
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                records += self._claim(
                    owner,
                    len(chunk),
                    now,
                    lease,
                    extra=" AND id IN (" + ", ".join(["%s"] * len(chunk)) + ")",
                    extra_params=chunk,
                )
        if len(records) < limit:
            records += self._claim(
                owner,
                limit - len(records),
                now,
                lease,
                extra=" AND (attempts > 0 OR created_at <= %s)",
                extra_params=(now - lease,),
            )
        token = rows[-1][0] if rows else None
        return sorted(records, key=lambda record: record.row), token

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
        return self._insert(topic, key, body, headers, str(uuid.uuid4()), now)

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<CDCOutbox outbox.{self.instance} slot={self.slot} {state}>"
