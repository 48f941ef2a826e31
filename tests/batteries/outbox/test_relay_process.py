"""Real relay processes on the real PostgreSQL: SIGKILL mid-batch, SIGTERM, two relays.

The relay (``manage.py outbox_relay``) publishes through the queue battery (the ``db``
queue on the same database), with a publish function that lingers 100 ms per message
(:mod:`.relay_fixture`) so a batch is in flight long enough to be interrupted. The
consumer is the documented one: pop, then ``inbox.process`` in one transaction with the
consumer's own write, so a redelivered message changes nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections import Counter

import psycopg
import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.outbox import decode

from .conftest import clear_tables, relay_env, seed, start_relay, wait_for

PUBLISH = "tests.batteries.outbox.relay_fixture.publish"
EFFECTS = "outbox_test_effects"
#: A batch publishes for BATCH x 0.1 s = 2 s, well inside its 4 s lease.
BATCH = 20


def env_for(dsn: str, **extra: str) -> dict[str, str]:
    variables = {
        "OUTBOX__DEFAULT__DSN": dsn,
        "OUTBOX__DEFAULT__BATCH_SIZE": str(BATCH),
        "OUTBOX__DEFAULT__LOCK_SECONDS": "4",
        "RELAY_FIXTURE_DELAY": "0.1",
        "OUTBOX__DEFAULT__POLL_INTERVAL": "100ms",
        "QUEUE__DEFAULT__ADAPTER": "db",
        "QUEUE__DEFAULT__DSN": dsn,
    }
    return relay_env(**{**variables, **extra})


def count(dsn: str, sql: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return int(conn.execute(sql).fetchone()[0])


def queued_ids(dsn: str) -> list[str]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute("SELECT body FROM toolkit_queue_message ORDER BY id").fetchall()
    return [decode(bytes(body)).id for (body,) in rows]


def stop(process: subprocess.Popen[bytes], signum: int = signal.SIGTERM) -> int:
    if process.poll() is None:
        os.killpg(process.pid, signum)
    return process.wait(30)


@pytest.fixture
def pg(postgres_dsn):
    clear_tables(postgres_dsn)
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {EFFECTS}")
        conn.execute(f"CREATE TABLE {EFFECTS} (message_id text NOT NULL)")
    yield postgres_dsn
    clear_tables(postgres_dsn)
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {EFFECTS}")


@pytest.fixture
def services_on(pg):
    container = Container(
        Config.load(
            {
                "outbox": {"adapter": "db", "options": {"dsn": pg}},
                "queue": {"adapter": "db", "options": {"dsn": pg}},
            },
            {},
        )
    )
    yield container
    container.close()


def wait_pushed(pg: str, at_least: int) -> None:
    """Wait (bounded) until the relay pushed ``at_least`` messages onto the queue table."""
    sql = "SELECT count(*) FROM toolkit_queue_message"
    wait_for(lambda: count(pg, sql) >= at_least, 60, f"{at_least} pushes")


def test_sigkill_mid_batch_then_restart_delivers_each_committed_message_once(
    pg, services_on, tmp_path
):
    from django.db import transaction

    outbox = services_on.outbox()
    committed: list[str] = []
    rolled_back: list[str] = []
    for block in range(6):
        with transaction.atomic(using=outbox.database.alias):
            committed += [outbox.publish("orders", {"n": block * 25 + i}) for i in range(25)]
        try:
            with transaction.atomic(using=outbox.database.alias):
                rolled_back += [outbox.publish("orders", {"gone": block}) for _ in range(3)]
                raise RuntimeError("the business write failed")
        except RuntimeError:
            pass
    assert count(pg, "SELECT count(*) FROM toolkit_outbox_message") == 150

    log = tmp_path / "relay.log"
    relay = start_relay(env_for(pg), log, "--publish", PUBLISH)
    try:
        wait_pushed(pg, 70)
        os.killpg(relay.pid, signal.SIGKILL)
        relay.wait(30)
    finally:
        stop(relay, signal.SIGKILL)
    # Killed mid-batch: the second batch is published in part and still leased, unmarked.
    leased = count(
        pg,
        "SELECT count(*) FROM toolkit_outbox_message WHERE status = 'pending' AND locked_by <> ''",
    )
    published = count(pg, "SELECT count(*) FROM toolkit_queue_message")
    sent = count(pg, "SELECT count(*) FROM toolkit_outbox_message WHERE status = 'sent'")
    assert leased == BATCH and sent % BATCH == 0, (leased, sent)
    assert sent < published < sent + BATCH, (sent, published)

    restarted = start_relay(env_for(pg, RELAY_FIXTURE_DELAY="0"), log, "--publish", PUBLISH)
    try:
        wait_for(
            lambda: (
                count(pg, "SELECT count(*) FROM toolkit_outbox_message WHERE status = 'sent'")
                == 150
            ),
            60,
            "every committed message sent",
        )
    finally:
        assert stop(restarted) == 0, log.read_text()

    deliveries = queued_ids(pg)
    assert set(deliveries) == set(committed)
    assert not set(deliveries) & set(rolled_back)
    duplicates = [mid for mid, n in Counter(deliveries).items() if n > 1]
    assert duplicates, "the killed batch's published messages were published again"

    # The idempotent consumer: inbox mark and effect in one transaction.
    queue = services_on.queue()
    inbox = outbox.inbox("effects")

    def apply(delivered) -> None:
        outbox.database.execute(f"INSERT INTO {EFFECTS} VALUES (%s)", (delivered.id,))

    applied = 0
    while (message := queue.pop("orders", timeout=0)) is not None:
        applied += inbox.process(message, apply)
        queue.ack(message)
    assert applied == 150
    with psycopg.connect(pg, autocommit=True) as conn:
        effects = [row[0] for row in conn.execute(f"SELECT message_id FROM {EFFECTS}")]
    assert sorted(effects) == sorted(committed)


def test_sigterm_finishes_the_batch_in_flight(pg, tmp_path):
    seed(pg, 200, topic="orders")
    log = tmp_path / "relay.log"
    relay = start_relay(env_for(pg), log, "--publish", PUBLISH)
    try:
        wait_pushed(pg, 10)
        os.killpg(relay.pid, signal.SIGTERM)
        assert relay.wait(30) == 0, log.read_text()
    finally:
        stop(relay, signal.SIGKILL)
    # The batch in flight was finished (published and marked), and no other was begun.
    published = count(pg, "SELECT count(*) FROM toolkit_queue_message")
    sent = count(pg, "SELECT count(*) FROM toolkit_outbox_message WHERE status = 'sent'")
    assert published == sent and sent % BATCH == 0 and 0 < sent < 200, (published, sent)
    untouched = "SELECT count(*) FROM toolkit_outbox_message WHERE status = 'pending' "
    assert count(pg, untouched + "AND attempts = 0 AND locked_by = ''") == 200 - sent
    assert f"stopped after {sent // BATCH} batch(es): {sent} sent" in log.read_text()


def test_two_relays_never_deliver_one_row_twice(pg, tmp_path):
    total = 4000
    seed(pg, total, topic="orders")
    env = env_for(
        pg,
        RELAY_FIXTURE_DELAY="0",
        OUTBOX__DEFAULT__BATCH_SIZE="20",
        OUTBOX__DEFAULT__LOCK_SECONDS="60",
    )
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    relays = [start_relay(env, log, "--publish", PUBLISH, "--stop-when-empty") for log in logs]
    try:
        for relay, log in zip(relays, logs, strict=True):
            assert relay.wait(120) == 0, log.read_text()
    finally:
        for relay in relays:
            stop(relay, signal.SIGKILL)
    deliveries = queued_ids(pg)
    assert len(deliveries) == total
    assert len(set(deliveries)) == total
    sent = []
    for log in logs:
        line = [ln for ln in log.read_text().splitlines() if "stopped after" in ln][-1]
        sent.append(int(line.rsplit(": ", 1)[1].split(" sent")[0]))
    assert sum(sent) == total
    assert min(sent) > 0, f"both relays must have worked side by side: {sent}"
