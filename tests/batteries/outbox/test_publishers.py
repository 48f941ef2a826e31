"""The ``publisher`` option: the eventbus and queue batteries, opened through the container.

Also ``notify_channel``: on PostgreSQL a publish NOTIFYs at commit, and a relay waiting
out a long ``poll_interval`` wakes at once.
"""

from __future__ import annotations

import threading
import time

from django.db import transaction

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.outbox import decode

from .conftest import clear_tables


def test_the_eventbus_publisher_delivers_envelopes_to_subscribers():
    container = Container(
        Config.load({"outbox": {"adapter": "memory", "options": {"publisher": "eventbus"}}}, {})
    )
    try:
        received: list[bytes] = []
        arrived = threading.Event()

        def handler(event):
            received.append(event.data)
            arrived.set()

        container.eventbus().subscribe("orders.created", handler)
        outbox = container.outbox()
        message_id = outbox.publish("orders.created", {"id": 1}, key="o1")
        assert outbox.relay().run_once().sent == 1
        assert arrived.wait(10)
        delivered = decode(received[0])
        assert (delivered.id, delivered.key, delivered.json()) == (message_id, "o1", {"id": 1})
    finally:
        container.close()


def test_the_queue_publisher_pushes_to_the_topic():
    container = Container(
        Config.load({"outbox": {"adapter": "memory", "options": {"publisher": "queue"}}}, {})
    )
    try:
        outbox = container.outbox()
        ids = [outbox.publish("emails", {"n": n}) for n in range(3)]
        assert outbox.relay().run_once().sent == 3
        queue = container.queue()
        popped = [queue.pop("emails", timeout=0) for _ in range(3)]
        assert [decode(m).id for m in popped] == ids
        assert queue.pop("emails", timeout=0) is None
    finally:
        container.close()


def test_a_notify_wakes_a_waiting_relay(postgres_dsn):
    clear_tables(postgres_dsn)
    options = {"dsn": postgres_dsn, "poll_interval": "30s", "notify_channel": "toolkit_t_wake"}
    container = Container(Config.load({"outbox": {"adapter": "db", "options": options}}, {}))
    got: list[float] = []
    arrived = threading.Event()

    def publish(record):
        got.append(time.monotonic())
        arrived.set()

    try:
        outbox = container.outbox()
        relay = outbox.relay(publish)

        def work() -> None:
            relay.run()
            from django.db import connections

            connections.close_all()

        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        time.sleep(1.0)  # the relay found nothing and now waits out poll_interval
        started = time.monotonic()
        with transaction.atomic(using=outbox.database.alias):
            outbox.publish("t", b"wake up")
        assert arrived.wait(10)
        assert got[0] - started < 5  # far sooner than the 30 s poll
        relay.stop()
        thread.join(10)
        assert not thread.is_alive()
    finally:
        container.close()
        clear_tables(postgres_dsn)
