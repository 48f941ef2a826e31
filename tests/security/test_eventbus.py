"""Issue 12 defect 8 and item 10 (eventbus): no thread leak, no server subscription leak.

On the landed code a handler that never returns cost one thread per event (30 events, 30
threads, on past ``close()``), and a kvserver subscription dropped before the server
confirmed it stayed subscribed on the server for good.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid

import pytest
import redis

from tests.support.processes import wait_until
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.eventbus.adapters.kvserver import KVServerEventBus, channel_name
from toolkit_batteries.eventbus.adapters.memory import MemoryEventBus
from toolkit_batteries.eventbus.base import BusSettings


def bus_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("toolkit-eventbus-")}


def test_a_handler_that_never_returns_costs_a_bounded_number_of_threads(caplog) -> None:
    caplog.set_level(logging.WARNING, logger="toolkit.eventbus")
    before = bus_threads()
    never = threading.Event()  # set only at the end, to let the stuck calls go
    bus = MemoryEventBus(BusSettings(handler_timeout=0.05, max_abandoned=4))
    try:
        subscription = bus.subscribe("jobs", lambda event: never.wait(60))
        for i in range(30):
            bus.publish("jobs", {"i": i})
            time.sleep(0.01)
        # The cap stops the subscription after 4 stuck calls; the wait is the cap's own
        # bound (4 timeouts of 50 ms plus watchdog ticks), widened for a loaded machine.
        assert wait_until(lambda: not subscription.active, timeout=10)
        stuck = bus_threads() - before
        workers = [t for t in stuck if not t.name.endswith(("-watch", "-listener"))]
        assert len(workers) <= 4, [t.name for t in workers]
        assert subscription.timed_out == 4 and subscription.abandoned == 4
        assert subscription not in bus.subscriptions()
        assert "stopped the subscription" in caplog.text
        bus.close()
        after_close = bus_threads() - before
        time.sleep(0.3)  # several watchdog ticks: nothing new may start after close()
        late = bus_threads() - before - after_close
        assert not late
        assert not any(t.name.endswith("-watch") for t in bus_threads() - before)
    finally:
        never.set()
        bus.close()
    assert wait_until(lambda: not (bus_threads() - before), timeout=10)
    assert subscription.abandoned == 0  # the released calls were accounted for


def test_a_slow_but_finite_handler_keeps_its_subscription() -> None:
    release = threading.Event()
    calls: list[int] = []

    def handler(event) -> None:
        if event.json()["i"] == 0:
            release.wait(10)
        calls.append(event.json()["i"])

    bus = MemoryEventBus(BusSettings(handler_timeout=0.05, max_abandoned=4))
    try:
        subscription = bus.subscribe("jobs", handler)
        for i in range(5):
            bus.publish("jobs", {"i": i})
        assert wait_until(lambda: calls == [1, 2, 3, 4], timeout=10)
        assert subscription.active and subscription.timed_out == 1
    finally:
        release.set()
        bus.close()


@pytest.mark.redis
def test_a_subscription_dropped_before_confirmation_is_unsubscribed_on_the_server(
    redis_url: str,
) -> None:
    client = redis.Redis.from_url(redis_url)
    prefix = f"t-{uuid.uuid4().hex}:"
    channel = channel_name(prefix, "orders")
    # subscribe_timeout 0: subscribe gives up before the server can confirm, so the
    # subscription is dropped while its SUBSCRIBE is in flight.
    bus = KVServerEventBus(client, BusSettings(), prefix=prefix, subscribe_timeout=0)
    try:
        with pytest.raises(ServiceUnavailableError):
            bus.subscribe("orders", lambda event: None)
        assert bus.subscriptions() == ()

        def numsub() -> int:
            return dict(client.pubsub_numsub(channel))[channel.encode()]

        # Give the listener time to send both commands and read the replies; then the
        # server must hold no subscriber (it held one forever before the fix).
        time.sleep(0.5)
        assert wait_until(lambda: numsub() == 0, timeout=5), "still subscribed on the server"
        # The bus is still usable: a later subscription is confirmed and receives.
        bus.subscribe_timeout = 5.0
        got: list[bytes] = []
        bus.subscribe("orders", lambda event: got.append(event.data))
        assert numsub() == 1
        client.publish(channel, b"hello")
        assert wait_until(lambda: got == [b"hello"], timeout=5)
    finally:
        bus.close()
        client.close()
