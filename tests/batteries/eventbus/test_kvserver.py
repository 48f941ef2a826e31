"""The kvserver adapter: channels on the server, other processes, outages."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

import pytest
import redis

from tests.ports import free_port
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.eventbus.adapters.kvserver import KVServerEventBus, channel_name
from toolkit_batteries.eventbus.base import BusSettings

from ..ratelimit.private_redis import PrivateRedis
from .conftest import Recorder, wait_for

pytestmark = pytest.mark.redis

ROOT = __file__.rsplit("/tests/", 1)[0]
CHILD = (sys.executable, "-m", "tests.batteries.eventbus.child_publish")


@pytest.fixture
def prefix() -> str:
    return f"t-{uuid.uuid4().hex}:"


@pytest.fixture
def client(redis_url):
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def numsub(client: redis.Redis, channel: str) -> int:
    return dict(client.pubsub_numsub(channel))[channel.encode()]


def test_channels_are_prefixed_and_follow_local_subscriptions(client, prefix):
    bus = KVServerEventBus(client, BusSettings(), prefix=prefix)
    channel = channel_name(prefix, "orders")
    assert channel == f"{prefix}eventbus:orders"
    got = Recorder()
    first = bus.subscribe("orders", got)
    second = bus.subscribe("orders", Recorder())
    assert numsub(client, channel) == 1  # one connection per bus, whatever the handlers
    client.publish(channel, b"from a raw client")
    wait_for(lambda: len(got.events) == 1)
    assert got.events[0].data == b"from a raw client" and got.events[0].topic == "orders"
    first.unsubscribe()
    assert numsub(client, channel) == 1
    second.unsubscribe()
    wait_for(lambda: numsub(client, channel) == 0)
    bus.close()


def test_two_buses_share_events_and_a_bus_hears_itself(client, redis_url, prefix):
    other_client = redis.Redis.from_url(redis_url)
    publisher = KVServerEventBus(other_client, BusSettings(), prefix=prefix)
    listener = KVServerEventBus(client, BusSettings(), prefix=prefix)
    elsewhere = KVServerEventBus(client, BusSettings(), prefix=f"other-{prefix}")
    heard, own, isolated = Recorder(), Recorder(), Recorder()
    listener.subscribe("t", heard)
    publisher.subscribe("t", own)
    elsewhere.subscribe("t", isolated)
    publisher.publish("t", {"n": 1})
    wait_for(lambda: len(heard.events) == 1 and len(own.events) == 1)
    # A marker published on the other prefix after the event: Redis hands a connection
    # its messages in order and a subscription runs them in order, so once the marker
    # has arrived anything wrongly routed there would have arrived before it (a fixed
    # sleep proved nothing on a loaded machine).
    elsewhere.publish("t", {"marker": True})
    wait_for(lambda: len(isolated.events) >= 1)
    assert isolated.payloads() == [{"marker": True}]  # another prefix is another bus
    for bus in (publisher, listener, elsewhere):
        bus.close()
    other_client.close()


def test_events_from_another_process_arrive(client, redis_url, prefix):
    bus = KVServerEventBus(client, BusSettings(), prefix=prefix)
    got = Recorder()
    bus.subscribe("cross", got)
    subprocess.run(
        [*CHILD, redis_url, prefix, "cross", "5"],
        cwd=ROOT,
        check=True,
        timeout=30,
    )
    wait_for(lambda: len(got.events) == 5)
    assert got.payloads() == [{"i": i, "from": "child"} for i in range(5)]
    bus.close()


def test_close_stops_the_listener_and_frees_its_connection(client, prefix):
    bus = KVServerEventBus(client, BusSettings(), prefix=prefix)
    bus.subscribe("t", Recorder())
    thread = bus.listener_thread
    assert thread is not None and thread.is_alive() and bus.listening
    channel = channel_name(prefix, "t")
    assert numsub(client, channel) == 1
    bus.close()
    assert not thread.is_alive()
    wait_for(lambda: numsub(client, channel) == 0)


def test_unreachable_server_gives_a_clear_error_not_a_hang():
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    addr = f"redis://:s3cret-pw@127.0.0.1:{free_port()}/0"
    settings = {"eventbus": {"adapter": "kvserver", "options": {"kvserver": {"addr": addr}}}}
    container = Container(Config.load(settings, {}))
    bus = container.eventbus()  # opening connects to nothing yet
    bus.subscribe_timeout = 0.3
    started = time.monotonic()
    with pytest.raises(ServiceUnavailableError) as caught:
        bus.publish("t", b"x")
    assert str(caught.value) == "eventbus.default: unavailable: the key-value server did not answer"
    with pytest.raises(ServiceUnavailableError, match="did not confirm the subscription"):
        bus.subscribe("t", Recorder())
    assert time.monotonic() - started < 3
    assert bus.subscriptions() == ()  # the failed subscription was rolled back
    assert "s3cret-pw" not in str(caught.value) + repr(caught.value.__cause__)
    container.close()


def test_restart_mid_run_then_recovery(caplog):
    server = PrivateRedis()
    server.start()
    try:
        client = redis.Redis.from_url(server.url)
        bus = KVServerEventBus(client, BusSettings(), prefix="p:")
        got = Recorder()
        bus.subscribe("t", got)
        bus.publish("t", {"n": 1})
        wait_for(lambda: len(got.events) == 1)
        server.stop()
        started = time.monotonic()
        with pytest.raises(ServiceUnavailableError):
            bus.publish("t", {"n": "lost"})
        assert time.monotonic() - started < 3
        wait_for(lambda: not bus.listening)
        assert "lost the key-value server" in caplog.text
        server.start()
        wait_for(lambda: bus.listening, timeout=10)  # re-subscribed by itself
        assert "reconnected to the key-value server" in caplog.text
        bus.publish("t", {"n": 2})
        wait_for(lambda: len(got.events) == 2)
        assert got.payloads() == [{"n": 1}, {"n": 2}]
        bus.close()
        client.close()
    finally:
        server.stop()


def test_opens_from_configuration_with_the_shared_client(redis_url, prefix):
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    settings = {
        "eventbus": {
            "adapter": "redis",
            "options": {"buffer_size": 5, "kvserver": {"addr": redis_url, "prefix": prefix}},
        }
    }
    container = Container(Config.load(settings, {}))
    bus = container.eventbus()
    assert isinstance(bus, KVServerEventBus) and bus.settings.buffer_size == 5
    assert bus.settings.handler_timeout == 30 and bus.settings.close_timeout == 5
    assert bus.settings.max_handlers == 128
    container.close()
    assert bus.closed
