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

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "DimensionMismatchError": "base",
    "InvalidVectorError": "base",
    "MAX_BATCH": "base",
    "METRICS": "base",
    "Match": "base",
    "Record": "base",
    "VectorStore": "base",
    "VectorStoreError": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
