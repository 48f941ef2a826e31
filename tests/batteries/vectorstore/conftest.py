"""Open the vectorstore battery the real way (configuration, then a Container).

``db-sqlite`` runs on a fresh migrated SQLite file (searched through ``sqlite-vec``),
``db-postgres`` on the session's migrated database on the real PostgreSQL server
(searched through ``pgvector``), each under a unique instance name whose rows are deleted
afterwards; ``vecengine`` on qdrant-client's in-process engine, and ``vecengine-server``
through the adapter's ``url`` option (qdrant-client over REST, ``prefer_grpc`` off) on the
strict Qdrant stand-in of ``qdrant_server.py``, with an API key. Every store is opened
with a small ``dimension`` so the tests can reason about exact answers.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.batteries import db_block
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from ..cache.helpers import unique
from .qdrant_server import QdrantServer

VARIANTS = ("db-sqlite", "db-postgres", "vecengine", "vecengine-server")
#: The dimension the contract tests open stores with.
DIMENSION = 8
#: The key the Qdrant stand-in takes (it must reach the server and never an error).
QDRANT_KEY = "qk-contract-9f2e41d7"


@dataclass
class Opened:
    """An opened store and its container."""

    variant: str
    store: Any
    container: Container
    instance: str
    #: The Qdrant stand-in behind a ``vecengine-server`` store (``None`` otherwise).
    server: QdrantServer | None = None


def store_block(variant: str, request: pytest.FixtureRequest, **options: Any) -> dict:
    """Return the envelope selecting ``variant``."""
    options.setdefault("dimension", DIMENSION)
    if variant in ("db-sqlite", "db-postgres"):
        return db_block(request, variant, **options)
    return {"adapter": "vecengine", "options": options}


def server_block(server: QdrantServer, **options: Any) -> dict:
    """Return the envelope of a ``vecengine`` store on the Qdrant stand-in ``server``."""
    options.setdefault("dimension", DIMENSION)
    options.setdefault("api_key", server.key)
    return {
        "adapter": "qdrant",
        "options": {"url": server.url, "allow_insecure": True, **options},
    }


def open_quietly(container: Container, instance: str = "default") -> Any:
    """Open the store, without qdrant-client's warning about a key sent over plain http.

    (``test_strict_qdrant.py`` asserts that warning once; here it is noise.)
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Api key is used with an insecure connection")
        return container.vectorstore(instance)


def delete_rows(store: Any) -> None:
    """Delete a db store's rows (every namespace of its instance)."""
    from toolkit_batteries.vectorstore.adapters.db import TABLE, VERSIONS

    store.database.execute(f"DELETE FROM {TABLE} WHERE store = %s", (store.instance,))
    store.database.execute(f"DELETE FROM {VERSIONS} WHERE store = %s", (store.instance,))


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest) -> Iterator[Opened]:
    instance = unique()
    server = QdrantServer(QDRANT_KEY).start() if request.param == "vecengine-server" else None
    block = server_block(server) if server is not None else store_block(request.param, request)
    container = Container(Config.load({"vectorstore": {instance: block}}, {}))
    store = open_quietly(container, instance)
    try:
        yield Opened(request.param, store, container, instance, server)
    finally:
        if request.param.startswith("db"):
            delete_rows(store)
        container.close()
        if server is not None:
            server.stop()


def random_vectors(count: int, dimension: int = DIMENSION, seed: int = 7) -> list[list[float]]:
    """Return ``count`` reproducible random vectors in [-1, 1)."""
    rng = random.Random(seed)
    return [[rng.uniform(-1.0, 1.0) for _ in range(dimension)] for _ in range(count)]
