"""Open the vectorstore battery the real way (configuration, then a Container).

``db-sqlite`` runs on a fresh migrated SQLite file (searched through ``sqlite-vec``),
``db-postgres`` on the session's migrated database on the real PostgreSQL server
(searched through ``pgvector``), each under a unique instance name whose rows are deleted
afterwards; ``vecengine`` on qdrant-client's in-process engine. Every store is opened
with a small ``dimension`` so the tests can reason about exact answers.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.batteries import db_block
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from ..cache.helpers import unique

VARIANTS = ("db-sqlite", "db-postgres", "vecengine")
#: The dimension the contract tests open stores with.
DIMENSION = 8


@dataclass
class Opened:
    """An opened store and its container."""

    variant: str
    store: Any
    container: Container
    instance: str


def store_block(variant: str, request: pytest.FixtureRequest, **options: Any) -> dict:
    """Return the envelope selecting ``variant``."""
    options.setdefault("dimension", DIMENSION)
    if variant in ("db-sqlite", "db-postgres"):
        return db_block(request, variant, **options)
    return {"adapter": "vecengine", "options": options}


def delete_rows(store: Any) -> None:
    """Delete a db store's rows (every namespace of its instance)."""
    from toolkit_batteries.vectorstore.adapters.db import TABLE, VERSIONS

    store.database.execute(f"DELETE FROM {TABLE} WHERE store = %s", (store.instance,))
    store.database.execute(f"DELETE FROM {VERSIONS} WHERE store = %s", (store.instance,))


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest) -> Iterator[Opened]:
    instance = unique()
    block = store_block(request.param, request)
    container = Container(Config.load({"vectorstore": {instance: block}}, {}))
    store = container.vectorstore(instance)
    try:
        yield Opened(request.param, store, container, instance)
    finally:
        if request.param.startswith("db"):
            delete_rows(store)
        container.close()


def random_vectors(count: int, dimension: int = DIMENSION, seed: int = 7) -> list[list[float]]:
    """Return ``count`` reproducible random vectors in [-1, 1)."""
    rng = random.Random(seed)
    return [[rng.uniform(-1.0, 1.0) for _ in range(dimension)] for _ in range(count)]
