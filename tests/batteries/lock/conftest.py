"""Open the lock battery the real way (configuration, then a Container) on every adapter.

``memory`` gets a :class:`FakeClock`; ``kvserver`` runs on the real Redis server
(database 15) with a unique key prefix, and keeps the server's time, so TTL tests there
use short leases.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.clock import ElapsesTime
from tests.support.redis_server import drop_redis_prefix
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from ..cache.helpers import FakeClock, unique

VARIANTS = ("memory", "kvserver")


@dataclass
class Opened(ElapsesTime):
    """An opened lock service, its container, and a way to let time pass."""

    variant: str
    lock: Any
    container: Container
    clock: FakeClock | None


def lock_block(variant: str, request: pytest.FixtureRequest, **options: Any) -> dict:
    """Return the envelope selecting ``variant`` (kvserver with a unique prefix)."""
    if variant == "kvserver":
        options = {
            "url": request.getfixturevalue("redis_url"),
            "prefix": unique("t-") + ":",
            **options,
        }
    return {"adapter": variant, "options": options}


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest) -> Iterator[Opened]:
    block = lock_block(request.param, request, retry_interval="10ms")
    container = Container(Config.load({"lock": block}, {}))
    lock = container.lock()
    clock = None
    if request.param == "memory":
        clock = lock.clock = FakeClock()
    try:
        yield Opened(request.param, lock, container, clock)
    finally:
        if request.param == "kvserver":
            drop_redis_prefix(request.getfixturevalue("redis_url"), block["options"]["prefix"])
        container.close()
