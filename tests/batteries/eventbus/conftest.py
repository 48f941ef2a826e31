"""Open eventbus adapters for the contract tests: ``memory`` and ``kvserver`` (real Redis).

Every bus is opened the real way (configuration, then a Container); kvserver buses get a
unique prefix, so their channels never meet another test's.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.eventbus import EventBus

ADAPTERS = ("memory", "kvserver")


def wait_for(predicate: Callable[[], object], timeout: float = 5.0) -> None:
    """Wait until ``predicate()`` is true, polling; fail the test at the deadline."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.002)


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
def open_bus(request) -> Iterator[OpenBus]:
    """Return ``open(**options)`` for the parametrised adapter; closes what it opened."""
    containers: list[Container] = []
    holders: list[Recorder] = []
    adapter = request.param
    redis_url = request.getfixturevalue("redis_url") if adapter == "kvserver" else ""
    prefix = f"t-{uuid.uuid4().hex}:"

    def open_(**options: object) -> EventBus:
        if adapter == "kvserver":
            options["kvserver"] = {"addr": redis_url, "prefix": prefix}
        settings = {"eventbus": {"adapter": adapter, "options": options}}
        container = Container(Config.load(settings, {}))
        containers.append(container)
        return container.eventbus()

    open_.adapter = adapter  # type: ignore[attr-defined]
    open_.holders = holders  # type: ignore[attr-defined]
    yield open_
    for holder in holders:
        holder.release.set()
    for container in containers:
        container.close()


@pytest.fixture(autouse=True)
def _toolkit_logs_reach_caplog(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let toolkit records reach pytest's handler even if a LOGGING config re-routed them.

    Other tests may leave logging reconfigured (an in-process Celery worker sets the root
    level to ERROR; a project's LOGGING may stop ``toolkit`` propagating); these tests
    read warnings through caplog.
    """
    import logging

    for name in ("toolkit", "toolkit.eventbus"):
        logger = logging.getLogger(name)
        monkeypatch.setattr(logger, "propagate", True)
        monkeypatch.setattr(logger, "disabled", False)
        monkeypatch.setattr(logger, "level", logging.DEBUG)
