"""The ``vectorstore`` battery: embedding storage and similarity search.

Get the configured store from the registry (``services.vectorstore()``) or a container
(``container.vectorstore()``); pick ``db`` (the default: SQLite through ``sqlite-vec``,
PostgreSQL through ``pgvector``) or ``vecengine`` (a dedicated vector database) in
settings::

    store = services.vectorstore()
    store.upsert([("doc-1", embedding, {"lang": "en"})], namespace="docs")
    store.query(question, k=10, metric="cosine", filter={"lang": "en"}, namespace="docs")
"""

from __future__ import annotations

from .base import (
    MAX_BATCH,
    METRICS,
    DimensionMismatchError,
    InvalidVectorError,
    Match,
    Record,
    VectorStore,
    VectorStoreError,
)

__all__ = [
    "MAX_BATCH",
    "METRICS",
    "DimensionMismatchError",
    "InvalidVectorError",
    "Match",
    "Record",
    "VectorStore",
    "VectorStoreError",
]
