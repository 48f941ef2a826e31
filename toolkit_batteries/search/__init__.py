"""The ``search`` battery: full-text search in SQL or on a dedicated search server.

Get the configured search service from the registry (``services.search()``) or a
container (``container.search()``); pick ``db`` (the default: SQLite FTS5 or PostgreSQL
full-text search, on the project's database or a ``dsn``) or ``searchengine`` (a search
server's HTTP API) in settings. :mod:`.sync` keeps a Django model indexed.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base=(
        "Document Hit Page Search SearchBatchTooLargeError SearchDocumentNotFoundError SearchError "
        "SearchQueryError"
    ),
)
