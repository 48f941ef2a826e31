"""The ``cdc`` adapter on a PostgreSQL cluster of the test's own with ``wal_level=logical``.

The relay learns of new rows from a pgoutput replication slot instead of polling; it must
deliver the same stream as the polling ``db`` relay: committed messages in order, rolled
back ones never, each once.
"""

from __future__ import annotations

import struct
import uuid

import psycopg
import pytest
from django.db import transaction

from tests.support.clock import EPOCH, FakeClock
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError
from toolkit_batteries.outbox import Record, decode
from toolkit_batteries.outbox.adapters.cdc import Transaction, decode_transactions

from .conftest import clear_tables


@pytest.fixture
def cdc(logical_postgres):
    """Open a cdc outbox with a slot and publication of this test's own."""
    clear_tables(logical_postgres)
    name = f"t_{uuid.uuid4().hex[:10]}"
    options = {"dsn": logical_postgres, "slot": f"{name}_slot", "publication": f"{name}_pub"}
    container = Container(Config.load({"outbox": {"adapter": "cdc", "options": options}}, {}))
    outbox = container.outbox()
    yield outbox
    container.close()
    with psycopg.connect(logical_postgres, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
            "WHERE slot_name = %s",
            (options["slot"],),
        )
        conn.execute(f'DROP PUBLICATION IF EXISTS "{options["publication"]}"')
    clear_tables(logical_postgres)


def scenario(outbox) -> list[bytes]:
    """Publish 3 committed transactions with rollbacks in between; return committed payloads."""
    kept: list[bytes] = []
    alias = outbox.database.alias
    for block in range(3):
        with transaction.atomic(using=alias):
            for number in range(4):
                payload = f"b{block}-m{number}".encode()
                outbox.publish("orders", payload, key=f"k{block}")
                kept.append(payload)
        try:
            with transaction.atomic(using=alias):
                outbox.publish("orders", b"rolled back")
                raise RuntimeError
        except RuntimeError:
            pass
    return kept


def drain(outbox, publish) -> int:
    relay = outbox.relay(publish)
    total = 0
    for _ in range(20):
        result = relay.run_once()
        total += result.sent
        if result.claimed == 0:
            break
    return total


def test_cdc_delivers_the_same_stream_as_the_polling_relay(cdc, make_outbox):
    cdc.relay(lambda r: None).run_once()  # creates the publication and the slot
    expected = scenario(cdc)
    got: list[Record] = []
    assert drain(cdc, got.append) == len(expected)
    assert [r.payload for r in got] == expected

    polled = make_outbox("db-postgres").outbox
    polled.clock = cdc.clock
    assert scenario(polled) == expected
    also: list[Record] = []
    drain(polled, also.append)
    assert [r.payload for r in also] == [r.payload for r in got]
    assert [r.key for r in also] == [r.key for r in got]

    assert cdc.status().processed == len(expected) and cdc.status().pending == 0
    assert drain(cdc, got.append) == 0  # the slot advanced: nothing comes twice
    assert len({r.message_id for r in got}) == len(got)
    assert all(decode(r.envelope()).topic == "orders" for r in got)


def test_the_relay_reads_the_slot_not_the_table(cdc, logical_postgres):
    relay = cdc.relay(lambda r: None)
    relay.run_once()
    with psycopg.connect(logical_postgres, autocommit=True) as conn:
        (plugin,) = conn.execute(
            "SELECT plugin FROM pg_replication_slots WHERE slot_name = %s", (cdc.slot,)
        ).fetchone()
    assert plugin == "pgoutput"
    with transaction.atomic(using=cdc.database.alias):
        cdc.publish("t", b"fresh")
    # A fresh row (attempts 0, younger than lock_seconds) is found through the slot only:
    # the table sweep skips it, so with the slot's changes consumed it would stay pending.
    assert cdc._claim("probe", 10, cdc.clock(), 30, extra=" AND attempts > 0") == []
    assert relay.run_once().sent == 1


def test_a_crash_before_the_slot_advances_redelivers_nothing_twice(cdc):
    cdc.relay(lambda r: None).run_once()
    cdc.publish("t", b"one")
    got: list[Record] = []
    relay = cdc.relay(got.append)
    records, _token = cdc._begin_batch(relay.owner, 100, cdc.clock(), 30)
    for record in records:  # published and marked, then "killed" before _end_batch
        got.append(record)
    cdc._mark_sent([r.row for r in records], cdc.clock())
    assert relay.run_once().sent == 0  # the same changes again: already sent, skipped
    assert [r.payload for r in got] == [b"one"]


def test_failed_publishes_are_retried_by_the_sweep(cdc):
    clock = FakeClock(EPOCH)
    cdc.clock = clock
    cdc.relay(lambda r: None).run_once()
    cdc.publish("t", b"flaky")
    attempts: list[int] = []

    def flaky(record: Record) -> None:
        attempts.append(record.attempts)
        if record.attempts == 1:
            raise ConnectionError("down")

    relay = cdc.relay(flaky)
    assert relay.run_once().retried == 1
    clock.advance(0.5)
    assert relay.run_once().claimed == 0  # backoff (about 1 s) not over
    clock.advance(5)
    assert relay.run_once().sent == 1
    assert attempts == [1, 2]


def test_logical_messages_with_the_prefix_become_outbox_messages(cdc, logical_postgres):
    cdc.relay(lambda r: None).run_once()
    with psycopg.connect(logical_postgres) as conn:
        conn.execute(
            "SELECT pg_logical_emit_message(true, %s, %s)",
            ("toolkit_outbox", '{"topic": "sql.event", "payload": {"a": 1}, "key": "k"}'),
        )
        conn.rollback()
        conn.execute(
            "SELECT pg_logical_emit_message(true, %s, %s)",
            ("toolkit_outbox", '{"topic": "sql.event", "payload": {"a": 2}}'),
        )
        conn.execute(
            "SELECT pg_logical_emit_message(true, %s, %s)", ("other_prefix", '{"topic": "x"}')
        )
        conn.commit()
    got: list[Record] = []
    drain(cdc, got.append)
    assert [(r.topic, decode(r.envelope()).json()) for r in got] == [("sql.event", {"a": 2})]


def _relation(oid: int, table: str, columns: list[str]) -> bytes:
    body = struct.pack("!i", oid) + b"public\0" + table.encode() + b"\0d"
    body += struct.pack("!h", len(columns))
    for column in columns:
        body += b"\0" + column.encode() + b"\0" + struct.pack("!ii", 23, -1)
    return b"R" + body


def _insert(oid: int, values: list[str]) -> bytes:
    body = b"I" + struct.pack("!i", oid) + b"N" + struct.pack("!h", len(values))
    for value in values:
        body += b"t" + struct.pack("!i", len(value)) + value.encode()
    return body


def _message(prefix: str, content: bytes, transactional: bool = False) -> bytes:
    head = b"M" + bytes([int(transactional)]) + struct.pack("!q", 0) + prefix.encode() + b"\0"
    return head + struct.pack("!i", len(content)) + content


def test_the_stream_is_cut_into_transactions_each_with_its_commit_lsn():
    begin, commit = b"B" + bytes(20), b"C" + bytes(25)
    rows = [
        ("0/1", begin),
        ("0/2", _relation(42, "toolkit_outbox_message", ["id", "topic"])),
        ("0/3", _insert(42, ["7", "a"])),
        ("0/4", _message("toolkit_outbox", b"in-tx", transactional=True)),
        ("0/5", _insert(42, ["8", "b"])),
        ("0/6", commit),
        ("0/7", _message("toolkit_outbox", b"alone")),
        ("0/8", _message("another_prefix", b"ignored")),
        ("0/9", begin),
        ("0/A", commit),
    ]
    relations: dict = {}
    got = decode_transactions(rows, relations, "toolkit_outbox")
    assert got == [
        Transaction("0/6", [7, 8], [b"in-tx"]),
        Transaction("0/7", [], [b"alone"]),
        Transaction("0/8", [], []),
        Transaction("0/A", [], []),
    ]
    assert [t.size for t in got] == [3, 1, 0, 0]
    assert relations == {42: ("toolkit_outbox_message", ["id", "topic"])}


def _pending_changes(dsn: str, slot: str, publication: str) -> int:
    """Return how many changes the slot still holds (its unconfirmed stream)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute(
            "SELECT count(*) FROM pg_logical_slot_peek_binary_changes(%s, NULL, NULL, "
            "'proto_version', '1', 'publication_names', %s)",
            (slot, publication),
        ).fetchone()[0]


def test_a_transaction_larger_than_the_batch_is_confirmed_once_all_its_rows_went(
    cdc, logical_postgres
):
    cdc.relay(lambda r: None).run_once()
    with transaction.atomic(using=cdc.database.alias):
        for number in range(5):
            cdc.publish("big", {"n": number})
    cdc.publish("small", {"n": 5})
    got: list[Record] = []
    relay = cdc.relay(got.append, batch_size=2)
    assert relay.run_once().claimed == 2
    # Part of the big transaction is still to go: the slot keeps it unconfirmed.
    assert _pending_changes(logical_postgres, cdc.slot, cdc.publication) > 0
    assert [relay.run_once().claimed for _ in range(3)] == [2, 2, 0]
    assert [decode(r.envelope()).json()["n"] for r in got] == [0, 1, 2, 3, 4, 5]
    assert _pending_changes(logical_postgres, cdc.slot, cdc.publication) == 0


def test_logical_messages_beyond_the_batch_become_rows_once(cdc, logical_postgres):
    cdc.relay(lambda r: None).run_once()
    with psycopg.connect(logical_postgres) as conn:
        for number in range(3):
            conn.execute(
                "SELECT pg_logical_emit_message(true, %s, %s)",
                ("toolkit_outbox", f'{{"topic": "sql.event", "payload": {{"n": {number}}}}}'),
            )
        conn.commit()
    got: list[Record] = []
    relay = cdc.relay(got.append, batch_size=1)
    assert [relay.run_once().claimed for _ in range(4)] == [1, 1, 1, 0]
    assert [decode(r.envelope()).json()["n"] for r in got] == [0, 1, 2]
    assert cdc.status().processed == 3 and cdc.status().pending == 0


def test_cdc_refuses_a_server_without_logical_wal(postgres_dsn):
    clear_tables(postgres_dsn)
    options = {"dsn": postgres_dsn, "slot": "never_made", "publication": "never_made"}
    container = Container(Config.load({"outbox": {"adapter": "cdc", "options": options}}, {}))
    try:
        with pytest.raises(ConfigurationError, match="wal_level"):
            container.outbox().relay(lambda r: None).run_once()
    finally:
        container.close()


def test_cdc_refuses_sqlite_and_bad_names(sqlite_dsn):
    for options, field in (
        ({"dsn": sqlite_dsn}, "dsn"),
        ({"dsn": sqlite_dsn, "slot": "bad-name"}, "slot"),
    ):
        container = Container(Config.load({"outbox": {"adapter": "cdc", "options": options}}, {}))
        try:
            with pytest.raises(InvalidOptionsError, match=f'"{field}"'):
                container.outbox()
        finally:
            container.close()
