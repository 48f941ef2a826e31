"""One contract, every adapter: memory, db on SQLite, db on the real PostgreSQL.

Transactions, relay batches, leases, retries with backoff, the dead list, the inbox,
purging and status behave the same on each; time moves with the fake clock.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.outbox import Delivered, OutboxClosedError, Record, decode


class Boom(Exception):
    """The caller's failure after the publish."""


def collect() -> tuple[list[Record], object]:
    got: list[Record] = []
    return got, got.append


class TestOutboxContract:
    def test_a_committed_publish_is_relayed_once_with_its_envelope(self, opened):
        outbox = opened.outbox
        with opened.atomic():
            message_id = outbox.publish(
                "orders.created", {"id": 7}, key="order-7", headers={"trace": "abc"}
            )
        got, publish = collect()
        stats = outbox.relay(publish).run(stop_when_empty=True)
        assert stats.sent == 1 and [r.message_id for r in got] == [message_id]
        delivered = decode(got[0].envelope())
        assert delivered == Delivered(
            message_id,
            "orders.created",
            "order-7",
            {"trace": "abc"},
            b'{"id":7}',
            delivered.created_at,
        )
        assert delivered.json() == {"id": 7}
        assert outbox.relay(publish).run(stop_when_empty=True).sent == 0
        assert len(got) == 1
        assert outbox.status().processed == 1 and outbox.status().pending == 0

    def test_a_rolled_back_publish_is_never_relayed(self, opened):
        outbox = opened.outbox
        with pytest.raises(Boom), opened.atomic():
            outbox.publish("orders.created", b"never")
            raise Boom
        with opened.atomic():
            outbox.publish("orders.created", b"kept")
            try:
                with opened.atomic():  # a savepoint: only the inner block rolls back
                    outbox.publish("orders.created", b"inner")
                    raise Boom
            except Boom:
                pass
        got, publish = collect()
        outbox.relay(publish).run(stop_when_empty=True)
        assert [r.payload for r in got] == [b"kept"]
        assert outbox.status().pending == 0

    def test_messages_are_relayed_in_publish_order_in_batches(self, make_outbox, variant):
        outbox = make_outbox(variant, batch_size=10).outbox
        for number in range(25):
            outbox.publish("numbers", {"n": number})
        got, publish = collect()
        relay = outbox.relay(publish)
        # Every relay fills its batch: cdc too, though each one-row transaction is three
        # changes (BEGIN, INSERT, COMMIT) in the slot.
        assert [relay.run_once().claimed for _ in range(4)] == [10, 10, 5, 0]
        relay.run(stop_when_empty=True)
        assert [decode(r.envelope()).json()["n"] for r in got] == list(range(25))

    def test_batch_size_bounds_a_claim(self, opened):
        outbox = opened.outbox
        for number in range(5):
            outbox.publish("numbers", {"n": number})
        got, publish = collect()
        relay = outbox.relay(publish, batch_size=2)
        assert [relay.run_once().claimed for _ in range(4)] == [2, 2, 1, 0]
        assert [decode(r.envelope()).json()["n"] for r in got] == [0, 1, 2, 3, 4]

    def test_a_claim_is_leased_until_lock_seconds_pass(self, opened):
        outbox = opened.outbox
        outbox.publish("t", b"x")
        # A relay that claimed and died (no publish result, no mark).
        claimed = outbox._claim("dead-relay", 10, opened.clock(), outbox.settings.lock_seconds)
        assert [r.attempts for r in claimed] == [1]
        got, publish = collect()
        relay = outbox.relay(publish)
        assert relay.run_once().claimed == 0
        opened.clock.advance(outbox.settings.lock_seconds - 1)
        assert relay.run_once().claimed == 0
        opened.clock.advance(2)
        assert relay.run_once().sent == 1
        assert got[0].attempts == 2 and got[0].message_id == claimed[0].message_id

    def test_a_batch_outliving_its_lease_stops_publishing(self, opened):
        outbox = opened.outbox
        for number in range(3):
            outbox.publish("t", {"n": number})
        got: list[Record] = []

        def slow(record: Record) -> None:
            got.append(record)
            if len(got) == 2:
                opened.clock.advance(outbox.settings.lock_seconds)

        relay = outbox.relay(slow)
        result = relay.run_once()
        assert (result.claimed, result.sent) == (3, 2)
        assert relay.run_once().sent == 1
        assert [decode(r.envelope()).json()["n"] for r in got] == [0, 1, 2]
        assert got[2].attempts == 2

    def test_failures_back_off_then_go_dead_and_can_be_requeued(self, make_outbox, variant):
        opened = make_outbox(
            variant,
            max_attempts=3,
            retry={"BaseDelay": "10s", "Multiplier": 2, "MaxDelay": "1m"},
        )
        outbox = opened.outbox
        outbox.publish("t", b"payload")
        calls: list[int] = []

        def fail(record: Record) -> None:
            calls.append(record.attempts)
            raise ConnectionError("broker down")

        relay = outbox.relay(fail)
        assert relay.run_once().retried == 1
        opened.clock.advance(9.9)  # backoff(1) = 10 s
        assert relay.run_once().claimed == 0
        opened.clock.advance(0.2)
        assert relay.run_once().retried == 1
        opened.clock.advance(19.9)  # backoff(2) = 20 s
        assert relay.run_once().claimed == 0
        opened.clock.advance(0.2)
        assert relay.run_once().dead == 1
        assert calls == [1, 2, 3]
        opened.clock.advance(3600)
        assert relay.run_once().claimed == 0
        status = outbox.status()
        assert (status.pending, status.failed) == (0, 1)
        assert status.last_error == "ConnectionError: broker down"
        dead = outbox.dead_messages()
        assert [(r.topic, r.attempts, r.status) for r in dead] == [("t", 3, "dead")]
        assert outbox.requeue_dead([dead[0].row + 1000]) == 0
        assert outbox.requeue_dead([dead[0].row]) == 1
        got, publish = collect()
        assert outbox.relay(publish).run_once().sent == 1
        assert got[0].attempts == 1 and got[0].message_id == dead[0].message_id
        assert outbox.dead_messages() == []

    def test_purge_dead_deletes_only_dead_rows(self, opened):
        outbox = opened.outbox
        outbox.publish("t", b"a")
        relay = outbox.relay(_always_fail, batch_size=1)
        for _ in range(outbox.settings.max_attempts):
            relay.run_once()
            opened.clock.advance(3600)
        outbox.publish("t", b"b")  # pending, never attempted
        dead = outbox.dead_messages()
        assert len(dead) == 1 and dead[0].attempts == outbox.settings.max_attempts
        assert outbox.purge_dead([dead[0].row]) == 1
        assert outbox.dead_messages() == []
        assert outbox.status().pending == 1  # the other message is untouched

    def test_requeue_all(self, make_outbox, variant):
        outbox = make_outbox(variant, max_attempts=1).outbox
        for number in range(3):
            outbox.publish("t", {"n": number})
        assert outbox.relay(_always_fail).run_once().dead == 3
        assert outbox.requeue_dead() == 3
        assert outbox.status().pending == 3

    def test_purge_removes_sent_history_older_than_retention(self, opened):
        outbox = opened.outbox
        outbox.publish("t", b"old")
        outbox.relay(lambda r: None).run_once()
        outbox.inbox("c").seen("m-old")
        opened.clock.advance(3600)
        outbox.publish("t", b"pending")
        assert outbox.purge(timedelta(hours=2)) == 0
        opened.clock.advance(2 * 3600)
        assert outbox.purge(timedelta(hours=2)) == 1
        assert outbox.inbox("c").seen("m-old") is False  # its mark was purged too
        status = outbox.status()
        assert (status.pending, status.processed) == (1, 0)
        with pytest.raises(ValueError):
            outbox.purge(-1)

    def test_the_default_retention_is_168_hours(self, opened):
        outbox = opened.outbox
        assert outbox.settings.retention == 168 * 3600
        outbox.publish("t", b"x")
        outbox.relay(lambda r: None).run_once()
        opened.clock.advance(167 * 3600)
        assert outbox.purge() == 0
        opened.clock.advance(2 * 3600)
        assert outbox.purge() == 1

    def test_status_reports_a_stall(self, opened):
        outbox = opened.outbox
        outbox.publish("t", b"x")
        assert outbox.status().stalled is False
        opened.clock.advance(301)
        status = outbox.status()
        assert status.stalled is True and status.oldest_pending >= 301
        assert status.as_dict()["stalled"] is True
        assert set(status.as_dict()) >= {"pending", "processed", "failed", "stalled"}

    def test_the_inbox_deduplicates_per_consumer(self, opened):
        inbox = opened.outbox.inbox("billing")
        assert inbox.seen("m-1") is False
        assert inbox.seen("m-1") is True
        assert opened.outbox.inbox("shipping").seen("m-1") is False
        ran: list[str] = []
        delivered = Delivered("m-2", "t", "", {}, b"{}")
        assert inbox.process(delivered, lambda d: ran.append(d.id)) is True
        assert inbox.process(delivered, lambda d: ran.append(d.id)) is False
        assert ran == ["m-2"]

    def test_bad_input_is_refused_and_nothing_is_written(self, opened):
        outbox = opened.outbox
        for topic in ("", "has space", "x" * 201, None):
            with pytest.raises((ValueError, TypeError)):
                outbox.publish(topic, b"x")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            outbox.publish("t", "text is not bytes")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            outbox.publish("t", b"x", headers={"n": 1})  # type: ignore[dict-item]
        with pytest.raises(ValueError):
            outbox.publish("t", b"x", key="a key")
        with pytest.raises(ValueError):
            outbox.inbox("c").seen("")
        with pytest.raises(ValueError):
            outbox.dead_messages(0)
        with pytest.raises(ValueError):
            outbox.requeue_dead([0])
        assert outbox.status().pending == 0

    def test_a_closed_outbox_refuses_use(self, opened):
        opened.outbox.close()
        with pytest.raises(OutboxClosedError, match=r"outbox\.default"):
            opened.outbox.publish("t", b"x")

    def test_payloads_never_reach_logs_or_reprs(self, opened, caplog):
        outbox = opened.outbox
        secret = "card-4111-1111-1111-1111"
        outbox.publish("t", {"card": secret})
        records: list[Record] = []

        def fail(record: Record) -> None:
            records.append(record)
            raise RuntimeError("broker refused")

        with caplog.at_level(logging.DEBUG):
            outbox.relay(fail).run_once()
        assert "broker refused" not in caplog.text  # only the class name is logged
        assert secret not in caplog.text
        assert secret not in repr(records[0]) and secret not in repr(outbox)
        assert secret not in repr(decode(records[0].envelope()))

    def test_an_unset_publisher_is_a_clear_error(self, opened):
        with pytest.raises(InvalidOptionsError, match=r"outbox\.default.*publisher"):
            opened.outbox.relay()


def _always_fail(record: Record) -> None:
    raise RuntimeError("down")
