"""Open the cache battery the real way (configuration, then a Container) on every adapter.

``memory`` runs in process; ``kvserver`` on the real Redis server (database 15) under a
unique instance name, hence a unique key namespace; ``db`` on a migrated SQLite file and
on the migrated real PostgreSQL database, each in a namespace named after a unique
instance. Memory and db get a :class:`FakeClock`; Redis keeps its own time, so TTL tests
there use short timeouts.

A container without a ``CACHES`` alias for its instance builds the backend itself and
registers nothing with Django's handler (issue 24), so there is no alias to forget after
a test; a backend's Redis lease goes back when the backend is collected.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.clock import ElapsesTime
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .helpers import FakeClock, unique

VARIANTS = ("memory", "kvserver", "db-sqlite", "db-postgres")


@dataclass
class Opened(ElapsesTime):
    """An opened cache, its container, and a way to let time pass."""

    variant: str
    cache: Any
    container: Container
    instance: str
    clock: FakeClock | None


def cache_block(variant: str, tmp_path, request: pytest.FixtureRequest, **extra: Any) -> dict:
    """Return the envelope that selects ``variant``."""
    if variant == "memory":
        return {"adapter": "memory", "options": extra}
    if variant == "kvserver":
        return {
            "adapter": "kvserver",
            "options": {"url": request.getfixturevalue("redis_url"), **extra},
        }
    if variant == "db-sqlite":
        return {"adapter": "db", "options": {"dsn": request.getfixturevalue("sqlite_dsn"), **extra}}
    return {"adapter": "db", "options": {"dsn": request.getfixturevalue("postgres_dsn"), **extra}}


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest, tmp_path) -> Iterator[Opened]:
    instance = unique()
    block = cache_block(request.param, tmp_path, request)
    container = Container(Config.load({"cache": {instance: block}}, {}))
    cache = container.cache(instance)
    clock = None
    if request.param != "kvserver":
        clock = FakeClock(time.time())
        cache.clock = clock
    try:
        yield Opened(request.param, cache, container, instance, clock)
    finally:
        cache.clear()  # Django holds the cache: it outlives the container
        container.close()
