"""Open the analytics battery the real way (configuration, then a Container) on every adapter.

``log`` writes to the ``toolkit.analytics`` logger (read back with ``caplog``);
``analytics_b`` sends to :class:`~tests.batteries.analytics.server.BatchServer`, the
provider's batch endpoint on 127.0.0.1, with ``allow_private`` and ``allow_insecure`` set
for the test only. :meth:`Opened.delivered` gives what reached the destination, in one
neutral shape, so the contract class asserts the same thing on both.
"""

from __future__ import annotations

import logging
import secrets as random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .server import BatchServer

VARIANTS = ("log", "analytics_b")

#: A write key in the provider's format; tests scan output for it.
API_KEY = "phc_" + random.token_urlsafe(24)


@pytest.fixture
def server() -> Iterator[BatchServer]:
    with BatchServer(API_KEY) as running:
        yield running


def provider_block(server: BatchServer, **options: Any) -> dict:
    """Return the envelope of an analytics_b instance on ``server`` (test-only allowances)."""
    return {
        "adapter": "analytics_b",
        "options": {
            "api_key": API_KEY,
            "endpoint": server.url,
            "allow_insecure": True,
            "allow_private": True,
            **options,
        },
    }


@dataclass
class Opened:
    """An opened analytics service and a way to read what it delivered."""

    variant: str
    analytics: Any
    container: Container
    caplog: pytest.LogCaptureFixture
    server: BatchServer | None

    def delivered(self) -> list[dict[str, Any]]:
        """Flush, then return ``{"event", "distinct_id", "properties", "uuid"}`` per event.

        ``properties`` are what the caller passed: capture properties, identify traits
        or group traits (the wire's ``$set`` / ``$group_set``), without the SDK's
        ``$lib`` markers; ``groups`` is the group membership (type -> key).
        """
        self.analytics.flush()
        if self.server is None:
            return [
                {
                    "event": r.analytics_event["event"],
                    "distinct_id": r.analytics_event["distinct_id"],
                    "properties": r.analytics_event["properties"],
                    "groups": r.analytics_event["groups"],
                    "uuid": r.analytics_event["uuid"],
                }
                for r in self.caplog.records
                if hasattr(r, "analytics_event")
            ]
        out = []
        for item in self.server.events():
            props = dict(item["properties"])
            groups = props.pop("$groups", {})
            if item["event"] == "$identify":
                props = props["$set"]
            elif item["event"] == "$groupidentify":
                groups = {props["$group_type"]: props["$group_key"]}
                props = props["$group_set"]
            else:
                props = {k: v for k, v in props.items() if not k.startswith("$lib")}
            out.append(
                {
                    "event": item["event"],
                    "distinct_id": item["distinct_id"],
                    "properties": props,
                    "groups": groups,
                    "uuid": item["uuid"],
                }
            )
        return out


def open_analytics(block: dict) -> Container:
    return Container(Config.load({"analytics": block}, {}))


@pytest.fixture(params=VARIANTS)
def make(request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture) -> Iterator[Any]:
    """Return ``make(**options)`` opening the variant with those options; closes them all."""
    caplog.set_level(logging.INFO, logger="toolkit.analytics")
    containers: list[Container] = []

    def make(**options: Any) -> Opened:
        server = None
        if request.param == "log":
            block: dict = {"adapter": "log", "options": options}
        else:
            server = request.getfixturevalue("server")
            block = provider_block(server, **options)
        container = open_analytics(block)
        containers.append(container)
        return Opened(request.param, container.analytics(), container, caplog, server)

    try:
        yield make
    finally:
        for container in containers:
            container.close()


@pytest.fixture
def opened(make: Any) -> Opened:
    return make()
