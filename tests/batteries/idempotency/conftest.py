"""Open the idempotency battery the real way (configuration, then a Container).

``memory`` runs in process; ``kvserver`` on the real Redis server (database 15) with a
unique ``kvserver.prefix``; ``db`` on a fresh migrated SQLite file and on the migrated
PostgreSQL database of the session, under a unique instance name (its rows are deleted
afterwards). Memory and db get a :class:`FakeClock`; Redis keeps its own time, so TTL
tests there use short lifetimes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.batteries import db_block
from tests.support.clock import ElapsesTime
from tests.support.redis_server import drop_redis_prefix
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from ..cache.helpers import FakeClock, unique

VARIANTS = ("memory", "kvserver", "db-sqlite", "db-postgres")


@dataclass
class Opened(ElapsesTime):
    """An opened idempotency store, its container, and a way to let time pass."""

    variant: str
    store: Any
    container: Container
    instance: str
    clock: FakeClock | None
    block: dict


def store_block(variant: str, tmp_path, request: pytest.FixtureRequest, **options: Any) -> dict:
    """Return the envelope selecting ``variant``."""
    if variant == "kvserver":
        url = request.getfixturevalue("redis_url")
        return {
            "adapter": "kvserver",
            "options": {"kvserver": {"addr": url, "prefix": unique("t-") + ":"}, **options},
        }
    if variant in ("db-sqlite", "db-postgres"):
        return db_block(request, variant, **options)
    return {"adapter": "memory", "options": options}


def cleanup(
    variant: str, block: dict, instance: str, request: pytest.FixtureRequest, store: Any = None
) -> None:
    """Delete what a test stored: its Redis keys or its rows (through ``store`` if open)."""
    if variant == "kvserver":
        prefix = block["options"]["kvserver"]["prefix"]
        drop_redis_prefix(request.getfixturevalue("redis_url"), prefix)
    elif variant.startswith("db") and store is not None:
        store._rows.delete()
    elif variant.startswith("db"):
        container = Container(Config.load({"idempotency": {instance: block}}, {}))
        container.idempotency(instance)._rows.delete()
        container.close()


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest, tmp_path) -> Iterator[Opened]:
    instance = unique()
    block = store_block(request.param, tmp_path, request)
    container = Container(Config.load({"idempotency": {instance: block}}, {}))
    store = container.idempotency(instance)
    clock = None
    if request.param != "kvserver":
        clock = store.clock = FakeClock(time.time())
    try:
        yield Opened(request.param, store, container, instance, clock, block)
    finally:
        if container.closed:
            cleanup(request.param, block, instance, request)
        else:
            cleanup(request.param, block, instance, request, store)
            container.close()
