"""One contract for every queue adapter: the same calls give the same results on each.

Runs on memory, kvserver (real Redis), db on SQLite and db on PostgreSQL. Time is a
:class:`FakeClock` shared by the queue, so visibility timeouts and delays are tested by
moving it; only the tests of blocking pops wait for real.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from toolkit_batteries.queue import DeadMessage, Message, Queue, QueueClosedError, QueueError

VT = 30.0  # the default visibility timeout


def pop_now(queue: Queue, topic: str = "t") -> Message | None:
    return queue.pop(topic, timeout=0)


def drain(queue: Queue, topic: str = "t") -> list[bytes]:
    bodies = []
    while (message := pop_now(queue, topic)) is not None:
        bodies.append(message.body)
        assert queue.ack(message)
    return bodies


class TestQueueContract:
    def test_identity(self, opened):
        queue = opened.queue
        assert isinstance(queue, Queue)
        assert queue.service_name == "queue" and queue.instance == "default"
        assert queue.adapter_name == opened.variant.split("-")[0]
        assert opened.container.queue() is queue
        assert queue.visibility_timeout == VT and queue.poll_timeout == 5.0

    def test_push_pop_ack_round_trip(self, opened):
        queue, clock = opened.queue, opened.clock
        message_id = queue.push("t", b"hello")
        assert isinstance(message_id, str) and message_id
        message = pop_now(queue)
        assert isinstance(message, Message)
        assert (message.id, message.topic, message.body, message.attempts) == (
            message_id,
            "t",
            b"hello",
            1,
        )
        assert message.enqueued_at == datetime.fromtimestamp(clock.now, UTC)
        assert queue.ack(message) is True
        assert queue.ack(message) is False  # the same acknowledgement twice
        clock.advance(VT * 2)
        assert pop_now(queue) is None  # acknowledged messages never come back
        assert queue.size("t") == 0

    def test_ids_are_distinct(self, opened):
        ids = [opened.queue.push("t", b"x") for _ in range(20)]
        assert len(set(ids)) == 20

    def test_push_many_keeps_order_and_ids(self, opened):
        queue, clock = opened.queue, opened.clock
        assert queue.push_many("t", []) == []
        ids = queue.push_many("t", [b"a", bytearray(b"b"), b"c"])
        assert len(set(ids)) == 3
        popped = [pop_now(queue) for _ in range(3)]
        assert [(m.id, m.body) for m in popped] == list(zip(ids, [b"a", b"b", b"c"], strict=True))
        later = queue.push_many("t", [b"x", b"y"], delay=5)
        assert pop_now(queue) is None and queue.size("t") == 2
        clock.advance(5)
        assert [pop_now(queue).id for _ in range(2)] == later
        bodies = [str(i).encode() for i in range(1100)]  # more than one batch
        many = queue.push_many("many", bodies)
        assert queue.size("many") == 1100 and len(set(many)) == 1100
        assert [pop_now(queue, "many").id for _ in range(3)] == many[:3]
        with pytest.raises(TypeError):
            queue.push_many("t", b"one body")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            queue.push_many("t", [b"ok", "text"])  # type: ignore[list-item]

    def test_fifo_per_topic_and_topics_are_separate(self, opened):
        queue = opened.queue
        for i in range(5):
            queue.push("a", f"a{i}".encode())
            queue.push("b", f"b{i}".encode())
        assert (queue.size("a"), queue.size("b"), queue.size("c")) == (5, 5, 0)
        assert drain(queue, "a") == [f"a{i}".encode() for i in range(5)]
        assert pop_now(queue, "c") is None
        assert drain(queue, "b") == [f"b{i}".encode() for i in range(5)]

    def test_fifo_holds_as_time_passes(self, opened):
        queue, clock = opened.queue, opened.clock
        for i in range(4):
            queue.push("t", str(i).encode())
            clock.advance(0.001)
        assert drain(queue) == [b"0", b"1", b"2", b"3"]

    def test_unacknowledged_message_reappears_after_visibility_timeout(self, opened):
        queue, clock = opened.queue, opened.clock
        queue.push("t", b"job")
        first = pop_now(queue)
        assert first is not None and first.attempts == 1
        assert queue.size("t") == 0  # in flight is not waiting
        clock.advance(VT - 0.5)
        assert pop_now(queue) is None  # still invisible
        clock.advance(0.5)
        assert queue.size("t") == 1  # the lease has expired
        second = pop_now(queue)
        assert second is not None
        assert (second.id, second.body, second.attempts) == (first.id, b"job", 2)
        assert second.enqueued_at == first.enqueued_at
        # The first delivery lost its lease: it can no longer settle the message.
        assert queue.ack(first) is False
        assert queue.nack(first) is False
        assert queue.dead(first, "late") is False
        assert queue.ack(second) is True
        clock.advance(VT * 2)
        assert pop_now(queue) is None

    def test_lease_ends_at_its_deadline_even_before_redelivery(self, opened):
        queue, clock = opened.queue, opened.clock
        queue.push("t", b"slow")
        message = pop_now(queue)
        clock.advance(VT)
        assert queue.ack(message) is False  # too late, though nobody popped it again
        again = pop_now(queue)
        assert again is not None and again.attempts == 2 and queue.ack(again)

    def test_per_pop_visibility_timeout(self, opened):
        queue, clock = opened.queue, opened.clock
        queue.push("t", b"x")
        queue.pop("t", timeout=0, visibility_timeout=2)
        clock.advance(1.9)
        assert pop_now(queue) is None
        clock.advance(0.1)
        assert pop_now(queue).attempts == 2

    def test_nack_makes_the_message_ready_again(self, opened):
        queue = opened.queue
        queue.push("t", b"x")
        message = pop_now(queue)
        assert queue.nack(message) is True
        assert queue.nack(message) is False  # settled already
        assert queue.ack(message) is False
        again = pop_now(queue)
        assert (again.id, again.attempts) == (message.id, 2)
        assert queue.ack(again)

    def test_nack_with_delay(self, opened):
        queue, clock = opened.queue, opened.clock
        queue.push("t", b"x")
        message = pop_now(queue)
        assert queue.nack(message, delay=timedelta(seconds=10))
        assert queue.size("t") == 1  # delayed messages wait too
        clock.advance(9.9)
        assert pop_now(queue) is None
        clock.advance(0.1)
        assert pop_now(queue).attempts == 2

    def test_delayed_push(self, opened):
        queue, clock = opened.queue, opened.clock
        queue.push("t", b"later", delay=5)
        queue.push("t", b"now")
        assert queue.size("t") == 2
        assert pop_now(queue).body == b"now"
        assert pop_now(queue) is None
        clock.advance(5)
        assert pop_now(queue).body == b"later"

    def test_expired_leases_come_back_together_in_deadline_order(self, opened):
        # Several leases lapse between two pops: one pop reclaims them all and the one
        # still held stays out. They come back by deadline, not by push order, except on
        # SQS, which promises no order.
        queue, clock = opened.queue, opened.clock
        for body in (b"a", b"b", b"c", b"d"):
            queue.push("t", body)
            clock.advance(0.001)
        for lease in (3, 1, 2):
            assert queue.pop("t", timeout=0, visibility_timeout=lease) is not None
        held = queue.pop("t", timeout=0, visibility_timeout=60)
        assert held.body == b"d"
        clock.advance(3)
        assert queue.size("t") == 3
        again = [pop_now(queue) for _ in range(3)]
        returned = [(m.body, m.attempts) for m in again]
        if opened.variant == "sqs":
            returned.sort()
            assert returned == [(b"a", 2), (b"b", 2), (b"c", 2)]
        else:
            assert returned == [(b"b", 2), (b"c", 2), (b"a", 2)]
        assert pop_now(queue) is None  # "d" is still leased
        assert all(queue.ack(m) for m in again) and queue.ack(held)
        assert queue.size("t") == 0

    def test_a_pop_before_the_delay_leaves_delayed_messages_as_they_were(self, opened):
        queue, clock = opened.queue, opened.clock
        queue.push("t", b"in-five", delay=5)
        for _ in range(3):  # each pop looks at the delayed head and leaves it
            assert pop_now(queue) is None
        queue.push("t", b"in-three", delay=3)
        assert queue.size("t") == 2
        clock.advance(3)
        assert pop_now(queue).body == b"in-three"
        assert pop_now(queue) is None
        clock.advance(2)
        message = pop_now(queue)
        assert (message.body, message.attempts) == (b"in-five", 1)

    def test_visible_order_puts_due_messages_before_newer_ones(self, opened):
        queue, clock = opened.queue, opened.clock
        queue.push("t", b"delayed", delay=1)
        clock.advance(2)
        queue.push("t", b"fresh")
        assert drain(queue) == [b"delayed", b"fresh"]

    def test_dead_messages_are_inspectable_and_requeued(self, opened):
        queue, clock = opened.queue, opened.clock
        for body in (b"one", b"two", b"three"):
            queue.push("t", body)
        dead_ids = []
        for reason in ("bad one", "bad two"):
            message = pop_now(queue)
            clock.advance(1)
            assert queue.dead(message, reason) is True
            assert queue.dead(message, reason) is False
            assert queue.ack(message) is False  # dead messages are not acknowledged
            dead_ids.append(message.id)
        assert queue.size("t") == 1
        clock.advance(VT * 2)  # dead messages never come back by themselves
        assert [m.body for m in [pop_now(queue)]] == [b"three"]
        assert pop_now(queue) is None
        dead = queue.dead_messages("t")
        assert all(isinstance(m, DeadMessage) for m in dead)
        assert [(m.id, m.body, m.reason, m.attempts) for m in dead] == [
            (dead_ids[0], b"one", "bad one", 1),
            (dead_ids[1], b"two", "bad two", 1),
        ]
        assert dead[0].died_at < dead[1].died_at
        assert dead[0].enqueued_at <= dead[0].died_at
        assert [m.id for m in queue.dead_messages("t", limit=1)] == [dead_ids[0]]
        assert queue.dead_messages("other") == []

        assert queue.requeue_dead("t", [dead_ids[1], "nonexistent"]) == 1
        assert [m.id for m in queue.dead_messages("t")] == [dead_ids[0]]
        back = pop_now(queue)
        assert (back.id, back.body, back.attempts) == (dead_ids[1], b"two", 1)  # reset
        assert queue.ack(back)
        assert queue.requeue_dead("t") == 1
        assert queue.dead_messages("t") == []
        assert drain(queue) == [b"one"]
        assert queue.requeue_dead("t") == 0
        assert queue.requeue_dead("t", []) == 0

    def test_purge_dead(self, opened):
        queue = opened.queue
        for body in (b"a", b"b", b"c"):
            queue.push("t", body)
        ids = []
        for _ in range(3):
            message = pop_now(queue)
            queue.dead(message, "x")
            ids.append(message.id)
        assert queue.purge_dead("t", [ids[0]]) == 1
        assert [m.id for m in queue.dead_messages("t")] == ids[1:]
        assert queue.purge_dead("t") == 2
        assert queue.dead_messages("t") == []
        assert queue.requeue_dead("t") == 0
        opened.clock.advance(VT * 2)
        assert pop_now(queue) is None

    def test_long_reason_is_cut(self, opened):
        queue = opened.queue
        queue.push("t", b"x")
        queue.dead(pop_now(queue), "r" * 5000)
        assert len(queue.dead_messages("t")[0].reason) == 2000

    def test_bodies_are_bytes_any_size(self, opened):
        queue = opened.queue
        # 1 MiB, every byte value; an adapter with a limit of its own (sqs) carries up to
        # that limit and refuses one byte more without pushing anything.
        limit = queue.max_body or 1024 * 1024
        big = (bytes(range(256)) * (limit // 256 + 1))[:limit]
        queue.push("t", b"")
        queue.push("t", bytearray(b"ba"))
        queue.push("t", big)
        if queue.max_body is not None:
            with pytest.raises(QueueError, match="limit"):
                queue.push("t", big + b"x")
        assert drain(queue) == [b"", b"ba", big]
        with pytest.raises(TypeError, match="bytes"):
            queue.push("t", "text")  # type: ignore[arg-type]

    @pytest.mark.parametrize("topic", ["", " ", "a b", "x" * 201, None, 5])
    def test_bad_topics_are_refused(self, opened, topic):
        with pytest.raises((TypeError, ValueError)):
            opened.queue.push(topic, b"x")
        with pytest.raises((TypeError, ValueError)):
            opened.queue.pop(topic, timeout=0)

    def test_bad_arguments_are_refused(self, opened):
        queue = opened.queue
        with pytest.raises(ValueError, match="delay"):
            queue.push("t", b"x", delay=-1)
        with pytest.raises(ValueError, match="timeout"):
            queue.pop("t", timeout=-1)
        with pytest.raises(ValueError, match="limit"):
            queue.dead_messages("t", limit=0)
        with pytest.raises(ValueError, match="limit"):
            queue.dead_messages("t", limit=1001)
        with pytest.raises(TypeError):
            queue.ack("not a message")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            queue.requeue_dead("t", "one-id")  # type: ignore[arg-type]
        assert queue.size("t") == 0  # nothing was pushed by the refused calls

    def test_foreign_message_is_not_acknowledged(self, opened):
        queue = opened.queue
        queue.push("t", b"x")
        real = pop_now(queue)
        fake = Message("no-such-id", "t", b"x", 1, real.enqueued_at)
        other_topic = Message(real.id, "elsewhere", b"x", 1, real.enqueued_at)
        assert queue.ack(fake) is False
        assert queue.ack(other_topic) is False
        assert queue.ack(real) is True

    def test_poll_timeout_returns_none(self, opened):
        queue = opened.queue
        started = time.monotonic()
        assert queue.pop("t", timeout=0.2) is None
        elapsed = time.monotonic() - started
        assert 0.18 <= elapsed < 2.0

    def test_blocked_pop_wakes_for_a_push(self, opened):
        queue = opened.queue
        got: list[Message | None] = []
        started = time.monotonic()
        popper = threading.Thread(target=lambda: got.append(queue.pop("t", timeout=5)))
        popper.start()
        time.sleep(0.1)
        queue.push("t", b"wake")
        popper.join(5)
        elapsed = time.monotonic() - started
        assert got and got[0] is not None and got[0].body == b"wake"
        assert elapsed < 2.0

    def test_concurrent_consumers_get_each_message_once(self, opened):
        queue = opened.queue
        total = 120
        for i in range(total):
            queue.push("t", str(i).encode())
        seen: Counter[bytes] = Counter()
        lock = threading.Lock()

        def consume() -> None:
            while (message := queue.pop("t", timeout=0)) is not None:
                with lock:
                    seen[message.body] += 1
                assert queue.ack(message)

        with ThreadPoolExecutor(4) as pool:
            for future in [pool.submit(consume) for _ in range(4)]:
                future.result()
        assert sorted(seen) == sorted(str(i).encode() for i in range(total))
        assert set(seen.values()) == {1}
        assert queue.size("t") == 0

    def test_use_after_close_is_an_error(self, opened):
        queue = opened.queue
        queue.push("t", b"x")
        message = pop_now(queue)
        queue.close()
        queue.close()  # idempotent
        assert queue.closed
        for call in (
            lambda: queue.push("t", b"x"),
            lambda: queue.pop("t", timeout=0),
            lambda: queue.ack(message),
            lambda: queue.size("t"),
            lambda: queue.dead_messages("t"),
        ):
            with pytest.raises(QueueClosedError):
                call()

    def test_close_wakes_a_blocked_pop(self, opened):
        queue = opened.queue
        outcome: list[BaseException | None] = []

        def pop() -> None:
            try:
                queue.pop("t", timeout=10)
                outcome.append(None)
            except BaseException as exc:
                outcome.append(exc)

        popper = threading.Thread(target=pop)
        popper.start()
        time.sleep(0.1)
        started = time.monotonic()
        queue.close()
        popper.join(5)
        assert not popper.is_alive() and time.monotonic() - started < 2.0
        assert isinstance(outcome[0], QueueClosedError)

    def test_close_closes_dependants_first(self, opened):
        queue, order = opened.queue, []

        class Dependant:
            def __init__(self, name: str) -> None:
                self.name = name

            def close(self) -> None:
                order.append((self.name, queue.closed))

        first, second = Dependant("first"), Dependant("second")
        queue.add_dependant(first)
        queue.add_dependant(second)
        queue.add_dependant(first)  # once only
        opened.container.close()
        assert order == [("second", False), ("first", False)]
        assert queue.closed

    def test_message_repr_hides_the_body(self, opened):
        opened.queue.push("t", b"secret-payload")
        message = pop_now(opened.queue)
        assert "secret-payload" not in repr(message) and message.id in repr(message)
