"""Open the session battery the real way (configuration, then a Container) on every adapter.

``memory``; ``kvserver`` on the real Redis server under a unique key prefix; ``db`` on a
fresh migrated SQLite file borrowed from the container's ``db`` service; ``db`` on the
real PostgreSQL server (the session's migrated database, emptied of sessions after each
test). Clock-driven adapters get a :class:`FakeClock`; Redis keeps real time.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.support.clock import EPOCH, FakeClock
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.session import SessionStore

VARIANTS = ("memory", "kvserver", "db-sqlite", "db-postgres")


@dataclass
class Opened:
    """An opened session store, its container and how to reach its backend."""

    variant: str
    store: SessionStore
    container: Container
    clock: FakeClock | None
    prefix: str = ""
    redis: Any = None
    extra: dict = field(default_factory=dict)

    @property
    def real_time(self) -> bool:
        """Tell whether the backend expires by real time (the key-value server)."""
        return self.clock is None


def empty_session_table(dsn: str) -> None:
    """Delete every row of the sessions table in the PostgreSQL database ``dsn``."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM toolkit_session_record")


@pytest.fixture
def redis_prefix(redis_url) -> Iterator[tuple[str, Any]]:
    """Return a unique key prefix and a raw client; delete the prefix's keys afterwards."""
    import redis

    prefix = f"t-{uuid.uuid4().hex}:"
    client = redis.Redis.from_url(redis_url)
    try:
        yield prefix, client
    finally:
        keys = list(client.scan_iter(match=f"{prefix}*", count=500))
        if keys:
            client.delete(*keys)
        client.close()


def settings_for(variant: str, request, tmp_path) -> tuple[dict, dict]:
    """Return ``TOOLKIT`` settings for ``variant`` and extra facts about it."""
    if variant == "memory":
        return {"session": {"adapter": "memory"}}, {}
    if variant == "kvserver":
        redis_url = request.getfixturevalue("redis_url")
        prefix, client = request.getfixturevalue("redis_prefix")
        block = {"addr": redis_url, "prefix": prefix}
        return {"session": {"adapter": "kvserver", "options": {"kvserver": block}}}, {
            "prefix": prefix,
            "redis": client,
        }
    if variant == "db-sqlite":
        path = request.getfixturevalue("sqlite_dsn")
        return {
            "db": {"adapter": "sqlfile", "options": {"path": path}},
            "session": {"adapter": "db"},
        }, {"path": path}
    dsn = request.getfixturevalue("postgres_dsn")
    request.addfinalizer(lambda: empty_session_table(dsn))
    return {"session": {"adapter": "db", "options": {"dsn": dsn}}}, {"dsn": dsn}


@pytest.fixture(params=VARIANTS)
def opened(request, tmp_path) -> Iterator[Opened]:
    settings, facts = settings_for(request.param, request, tmp_path)
    container = Container(Config.load(settings, {}))
    store = container.session()
    clock = None
    if request.param != "kvserver":
        clock = FakeClock(EPOCH)
        store.clock = clock
    try:
        yield Opened(
            request.param,
            store,
            container,
            clock,
            prefix=facts.pop("prefix", ""),
            redis=facts.pop("redis", None),
            extra=facts,
        )
    finally:
        container.close()
