"""Open the search battery the real way (configuration, then a Container).

``db-sqlite`` runs on a fresh migrated SQLite file (FTS5), ``db-postgres`` on the migrated
PostgreSQL database of the session (tsvector + GIN) under a unique instance name whose
rows are deleted afterwards, and ``searchengine`` on :class:`EngineServer`, a server on
127.0.0.1 speaking the Meilisearch wire format (``allow_insecure`` and ``allow_private``
set, as the outbound rules require for a local plain-http server).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.processes import serving
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .engine_server import EngineServer

VARIANTS = ("db-sqlite", "db-postgres", "searchengine")
API_KEY = "engine-key-" + secrets.token_hex(8)


@dataclass
class Opened:
    """An opened search service, its container and (for searchengine) its server."""

    variant: str
    search: Any
    container: Container
    instance: str
    server: EngineServer | None


@pytest.fixture
def engine() -> Iterator[EngineServer]:
    yield from serving(EngineServer(API_KEY))


def search_block(variant: str, request: pytest.FixtureRequest, **options: Any) -> dict:
    """Return the envelope selecting ``variant`` (the engine fixture for searchengine)."""
    if variant == "searchengine":
        server = request.getfixturevalue("engine")
        options = {
            "host": server.url,
            "api_key": API_KEY,
            "allow_insecure": True,
            "allow_private": True,
            **options,
        }
        return {"adapter": "searchengine", "options": options}
    fixture = "sqlite_dsn" if variant == "db-sqlite" else "postgres_dsn"
    return {"adapter": "db", "options": {"dsn": request.getfixturevalue(fixture), **options}}


def open_variant(variant: str, request: pytest.FixtureRequest, **options: Any) -> Opened:
    instance = "t" + secrets.token_hex(6)
    block = search_block(variant, request, **options)
    container = Container(Config.load({"search": {instance: block}}, {}))
    server = request.getfixturevalue("engine") if variant == "searchengine" else None
    return Opened(variant, container.search(instance), container, instance, server)


def close_variant(opened: Opened) -> None:
    if opened.variant.startswith("db") and not opened.container.closed:
        opened.search._rows.delete()
    if not opened.container.closed:
        opened.container.close()


def opened_variant(request: pytest.FixtureRequest) -> Iterator[Opened]:
    """Open ``request.param``'s variant for one test and close it after (``yield from``)."""
    handle = open_variant(request.param, request)
    try:
        yield handle
    finally:
        close_variant(handle)


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest) -> Iterator[Opened]:
    yield from opened_variant(request)
