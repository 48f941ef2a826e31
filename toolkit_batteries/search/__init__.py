"""The ``search`` battery: full-text search in SQL or on a dedicated search server.

Get the configured search service from the registry (``services.search()``) or a
container (``container.search()``); pick ``db`` (the default: SQLite FTS5 or PostgreSQL
full-text search, on the project's database or a ``dsn``) or ``searchengine`` (a search
server's HTTP API) in settings. :mod:`.sync` keeps a Django model indexed.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        Document,
        Hit,
        Page,
        Search,
        SearchBatchTooLargeError,
        SearchDocumentNotFoundError,
        SearchError,
        SearchQueryError,
    )

__all__ = [
    "Document",
    "Hit",
    "Page",
    "Search",
    "SearchBatchTooLargeError",
    "SearchDocumentNotFoundError",
    "SearchError",
    "SearchQueryError",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Document": "base",
    "Hit": "base",
    "Page": "base",
    "Search": "base",
    "SearchBatchTooLargeError": "base",
    "SearchDocumentNotFoundError": "base",
    "SearchError": "base",
    "SearchQueryError": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
