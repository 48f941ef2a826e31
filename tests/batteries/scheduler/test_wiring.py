"""The scheduler takes its job dispatcher and queue from the container that opened it.

Two containers (two scripts, two tests) must never share dispatches through the global
registry, and closing a container follows the spec's order: scheduler, job dispatcher,
queue (each closes before what it depends on).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from toolkit_batteries import services
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.queue.jobs import JobRegistry, QueueDispatcher, job
from toolkit_batteries.queue.jobs.payload import decode
from toolkit_batteries.scheduler import Schedule

T0 = datetime(2025, 1, 6, 10, 0, 30, tzinfo=UTC)
TOPIC = "jobs:default"


@pytest.fixture
def ping() -> Any:
    @job(name="wiring.ping", registry=JobRegistry())
    def ping(n: int) -> None:
        """Do nothing; only dispatched."""

    return ping


def _open(toolkit: dict) -> Container:
    return Container(Config.load(toolkit, {}))


@pytest.mark.parametrize(
    "toolkit",
    [{}, {"scheduler": {"adapter": "sqlserver"}}],
    ids=["embedded", "sqlserver"],
)
def test_a_scheduler_dispatches_onto_the_queue_of_its_own_container(toolkit, ping, request):
    if toolkit:
        path = request.getfixturevalue("sqlite_dsn")
        toolkit = {**toolkit, "db": {"adapter": "sqlfile", "options": {"path": path}}}
    first, second = _open(toolkit), _open(toolkit)
    try:
        scheduler = first.scheduler()
        assert ("queue", "default") not in first.opened()  # opened at the first fire
        scheduler.add(Schedule("every", "* * * * *", ping, args=(7,)))
        (fired,) = scheduler.run_pending(T0)
        assert fired.ok
        assert isinstance(scheduler.dispatcher, QueueDispatcher)
        assert scheduler.dispatcher.queue is first.queue()
        message = first.queue().pop(TOPIC, timeout=0)
        assert message is not None and decode(message.body).args == (7,)
        assert second.queue().size(TOPIC) == 0
        assert services.queue().size(TOPIC) == 0
    finally:
        second.close()
        first.close()
        services.close()


@pytest.mark.parametrize("queue_first", [False, True])
def test_closing_the_container_closes_scheduler_then_dispatcher_then_queue(ping, queue_first):
    container = _open({})
    if queue_first:  # the application touched the queue before the scheduler opened
        container.queue()
    order: list[str] = []

    def record(name: str, obj: Any, method: str = "close") -> None:
        original = getattr(obj, method)

        def close() -> None:
            if name not in order:  # a second close() is a no-op
                order.append(name)
            original()

        setattr(obj, method, close)

    scheduler = container.scheduler()
    scheduler.add(Schedule("every", "* * * * *", ping, args=(1,)))
    scheduler.run_pending(T0)  # the first fire resolves the dispatcher and its queue
    record("scheduler", scheduler)
    record("dispatcher", scheduler.dispatcher)
    # Queue.close() closes its dependants, then releases its own resources (_close).
    record("queue", container.queue(), "_close")
    container.close()
    assert order == ["scheduler", "dispatcher", "queue"]
    assert scheduler.dispatcher.closed


def test_an_unreachable_queue_is_a_failed_dispatch_not_a_failed_open(ping):
    queue = {"adapter": "kvserver", "options": {"addr": "127.0.0.1:1"}}
    with _open({"queue": queue}) as container:
        scheduler = container.scheduler()  # opens without the queue
        scheduler.add(Schedule("every", "* * * * *", ping, args=(1,)))
        (fired,) = scheduler.run_pending(T0)
        assert not fired.ok and fired.unreachable
        assert scheduler.dispatcher is None  # tried again at the next fire
