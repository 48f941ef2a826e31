"""The ``search`` battery: full-text search in SQL or on a dedicated search server.

Get the configured search service from the registry (``services.search()``) or a
container (``container.search()``); pick ``db`` (the default: SQLite FTS5 or PostgreSQL
full-text search, on the project's database or a ``dsn``) or ``searchengine`` (a search
server's HTTP API) in settings. :mod:`.sync` keeps a Django model indexed.
"""

from __future__ import annotations

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
