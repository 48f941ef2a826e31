"""Open eventbus adapters for the contract tests: ``memory`` and ``kvserver`` (real Redis).

Every bus is opened the real way (configuration, then a Container); kvserver buses get a
unique prefix, so their channels never meet another test's.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator

import pytest

from tests.support.batteries import BatteryOpener
from tests.support.logs import route_to_caplog
from tests.support.processes import wait_for as wait_for  # re-exported to the tests
from toolkit_batteries.eventbus import EventBus

ADAPTERS = ("memory", "kvserver")


class Recorder:
    """A handler that records events and can be held (blocked) until released."""

    def __init__(self, hold: bool = False) -> None:
        self.events: list = []
        self.started = threading.Event()
        self.release = threading.Event()
        if not hold:
            self.release.set()

    def __call__(self, event) -> None:
        self.started.set()
        self.release.wait(30)
        self.events.append(event)

    def payloads(self) -> list:
        return [e.json() for e in self.events]


OpenBus = Callable[..., EventBus]


@pytest.fixture(params=ADAPTERS)
def open_bus(request, open_battery: BatteryOpener) -> Iterator[OpenBus]:
    """Return ``open(**options)`` for the parametrised adapter; closes what it opened."""
    holders: list[Recorder] = []
    adapter = request.param
    redis_url = request.getfixturevalue("redis_url") if adapter == "kvserver" else ""
    prefix = f"t-{uuid.uuid4().hex}:"

    def open_(**options: object) -> EventBus:
        if adapter == "kvserver":
            options["kvserver"] = {"addr": redis_url, "prefix": prefix}
        return open_battery("eventbus", {"adapter": adapter, "options": options})

    open_.adapter = adapter  # type: ignore[attr-defined]
    open_.holders = holders  # type: ignore[attr-defined]
    yield open_
    for holder in holders:
        holder.release.set()


@pytest.fixture(autouse=True)
def _toolkit_logs_reach_caplog(monkeypatch: pytest.MonkeyPatch) -> None:
    """Route toolkit records to caplog: these tests read warnings there."""
    route_to_caplog(monkeypatch, "toolkit", "toolkit.eventbus")
