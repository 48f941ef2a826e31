"""One contract for every eventbus adapter: memory and kvserver (real Redis pub/sub)."""

from __future__ import annotations

import threading
import time

import pytest

from toolkit_batteries.eventbus import (
    Event,
    EventBus,
    EventBusClosedError,
    Subscription,
    TooManyHandlersError,
)

from .conftest import Recorder, wait_for


class TestEventBusContract:
    def test_dict_payloads_travel_as_json_and_bytes_as_bytes(self, open_bus):
        bus = open_bus()
        assert isinstance(bus, EventBus)
        got = Recorder()
        subscription = bus.subscribe("orders", got)
        assert isinstance(subscription, Subscription) and subscription.topic == "orders"
        bus.publish("orders", {"id": 7, "name": "café"})
        bus.publish("orders", b"\x00raw\xff")
        bus.publish("orders", bytearray(b"array"))
        wait_for(lambda: len(got.events) == 3)
        first, second, third = got.events
        assert first == Event("orders", '{"id":7,"name":"café"}'.encode())
        assert first.json() == {"id": 7, "name": "café"}
        assert (second.data, third.data) == (b"\x00raw\xff", b"array")

    @pytest.mark.parametrize(
        ("topic", "payload", "error"),
        [("", b"x", ValueError), (None, b"x", ValueError), ("t", "text", TypeError)],
    )
    def test_bad_topics_and_payloads_are_refused(self, open_bus, topic, payload, error):
        bus = open_bus()
        with pytest.raises(error):
            bus.publish(topic, payload)
        with pytest.raises(ValueError):
            bus.subscribe("", Recorder())
        with pytest.raises(TypeError):
            bus.subscribe("t", "not callable")

    def test_every_subscriber_gets_every_event_in_order_and_only_its_topic(self, open_bus):
        bus = open_bus()
        first, second, other = Recorder(), Recorder(), Recorder()
        bus.subscribe("a", first)
        bus.subscribe("a", second)
        bus.subscribe("b", other)
        for i in range(20):
            bus.publish("a", {"i": i})
        bus.publish("b", {"i": "b"})
        bus.publish("nobody-listens", {"i": "lost"})
        wait_for(lambda: len(first.events) == 20 and len(second.events) == 20)
        wait_for(lambda: len(other.events) == 1)
        expected = [{"i": i} for i in range(20)]
        assert first.payloads() == expected and second.payloads() == expected
        assert other.payloads() == [{"i": "b"}]

    def test_unsubscribe_stops_delivery(self, open_bus):
        bus = open_bus()
        kept, dropped = Recorder(), Recorder()
        bus.subscribe("t", kept)
        subscription = bus.subscribe("t", dropped)
        bus.publish("t", {"n": 1})
        wait_for(lambda: len(dropped.events) == 1 and len(kept.events) == 1)
        subscription.unsubscribe()
        subscription.unsubscribe()  # twice is fine
        assert not subscription.active and subscription not in bus.subscriptions()
        bus.publish("t", {"n": 2})
        wait_for(lambda: len(kept.events) == 2)
        assert dropped.payloads() == [{"n": 1}]

    def test_a_slow_handler_does_not_block_a_fast_one(self, open_bus):
        bus = open_bus()
        slow, fast = Recorder(hold=True), Recorder()
        open_bus.holders.append(slow)
        bus.subscribe("t", slow)
        bus.subscribe("t", fast)
        started = time.monotonic()
        for i in range(50):
            bus.publish("t", {"i": i})
        # The slow handler's worker may start after the fast one has finished on a loaded
        # machine: wait for both, then check the slow one is still stuck on the first.
        wait_for(lambda: len(fast.events) == 50 and slow.started.is_set())
        assert time.monotonic() - started < 5
        assert slow.events == []  # still stuck on the first
        slow.release.set()
        wait_for(lambda: len(slow.events) == 50)
        assert slow.payloads() == fast.payloads()

    def test_a_failing_handler_does_not_stop_delivery(self, open_bus, caplog):
        bus = open_bus()
        good = Recorder()
        calls: list[int] = []

        def bad(event):
            calls.append(1)
            raise RuntimeError("handler bug")

        failing = bus.subscribe("t", bad)
        bus.subscribe("t", good)
        for i in range(10):
            bus.publish("t", {"i": i})
        wait_for(lambda: len(good.events) == 10 and failing.failed == 10)
        assert len(calls) == 10  # the failing handler still got every event
        assert "handler raised; delivery continues" in caplog.text
        assert "handler bug" in caplog.text  # with the traceback
        assert bus.stats()["failed"] == 10

    def test_a_handler_past_handler_timeout_is_skipped(self, open_bus, caplog):
        # 1 s: the calls that return at once must never look stuck, even on a loaded
        # two-core machine (300 ms could time one of them out).
        bus = open_bus(handler_timeout="1s")
        received: list = []
        gate = threading.Event()

        def handler(event):
            if event.json()["i"] == 0:
                gate.wait(30)  # the first call hangs
            received.append(event.json()["i"])

        subscription = bus.subscribe("t", handler)
        for i in range(4):
            bus.publish("t", {"i": i})
        # delivered counts a call after it returns: wait for the count, not the list only
        wait_for(lambda: received == [1, 2, 3] and subscription.delivered == 3)
        assert subscription.timed_out == 1
        assert "ran past handler_timeout" in caplog.text
        gate.set()  # the abandoned call finishes late; it is not counted twice
        wait_for(lambda: len(received) == 4)
        wait_for(lambda: subscription.abandoned == 0)  # its late return has been handled
        assert (subscription.delivered, subscription.timed_out) == (3, 1)

    def test_a_full_buffer_drops_the_oldest_events(self, open_bus, caplog):
        bus = open_bus(buffer_size=3)
        held = Recorder(hold=True)
        open_bus.holders.append(held)
        subscription = bus.subscribe("t", held)
        bus.publish("t", {"i": 0})
        wait_for(held.started.is_set)  # event 0 is being handled, the buffer is empty
        for i in range(1, 7):
            bus.publish("t", {"i": i})
        wait_for(lambda: subscription.dropped == 3)
        assert subscription.pending == 3
        assert "buffer of a 't' subscription is full" in caplog.text
        held.release.set()
        wait_for(lambda: len(held.events) == 4)
        assert held.payloads() == [{"i": 0}, {"i": 4}, {"i": 5}, {"i": 6}]
        assert bus.stats()["dropped"] == 3

    def test_max_handlers_is_enforced_with_a_clear_error(self, open_bus):
        bus = open_bus(max_handlers=2)
        first = bus.subscribe("a", Recorder())
        bus.subscribe("b", Recorder())
        with pytest.raises(TooManyHandlersError, match=r"max_handlers \(2\)"):
            bus.subscribe("c", Recorder())
        first.unsubscribe()
        bus.subscribe("c", Recorder())

    def test_close_drains_then_refuses(self, open_bus):
        bus = open_bus()
        got: list = []

        def slowish(event):
            time.sleep(0.01)
            got.append(event.json())

        bus.subscribe("t", slowish)
        for i in range(10):
            bus.publish("t", {"i": i})
        wait_for(lambda: len(got) >= 1)  # kvserver: events are in flight through the server
        wait_for(lambda: sum(s.pending for s in bus.subscriptions()) + len(got) == 10)
        bus.close()
        assert got == [{"i": i} for i in range(10)]
        assert bus.closed and bus.stats()["undelivered"] == 0
        with pytest.raises(EventBusClosedError, match=r"eventbus\.default"):
            bus.publish("t", b"x")
        with pytest.raises(EventBusClosedError):
            bus.subscribe("t", Recorder())
        bus.close()  # twice is fine

    def test_close_is_bounded_by_close_timeout(self, open_bus, caplog):
        # The held handler would keep close waiting for 30 s; the bound below is
        # close_timeout plus slack for a loaded machine, still far below those 30 s.
        bus = open_bus(close_timeout="200ms")
        held = Recorder(hold=True)
        open_bus.holders.append(held)
        bus.subscribe("t", held)
        for i in range(5):
            bus.publish("t", {"i": i})
        wait_for(lambda: held.started.is_set() and bus.subscriptions()[0].pending == 4)
        started = time.monotonic()
        bus.close()
        assert time.monotonic() - started < 0.2 + 5
        assert bus.stats()["undelivered"] == 4
        assert "4 events undelivered" in caplog.text

    def test_async_handlers_and_publishing_from_a_handler(self, open_bus):
        bus = open_bus()
        final = Recorder()

        async def relay(event):
            bus.publish("second", {"from": event.json()["n"]})

        bus.subscribe("first", relay)
        bus.subscribe("second", final)
        bus.publish("first", {"n": 1})
        wait_for(lambda: final.payloads() == [{"from": 1}])

    def test_stats_count_across_unsubscribe(self, open_bus):
        bus = open_bus()
        got = Recorder()
        subscription = bus.subscribe("t", got)
        bus.publish("t", b"1")
        bus.publish("t", b"2")
        wait_for(lambda: len(got.events) == 2)
        subscription.unsubscribe()
        stats = bus.stats()
        assert stats["published"] == 2 and stats["delivered"] == 2
        assert stats["subscriptions"] == 0
        assert open_bus.adapter in repr(bus)
