"""Options of the ``vectorstore`` service (embedding storage and similarity search)."""

from __future__ import annotations

from toolkit_batteries.core.options import option, options_class

__all__ = ["VectorStoreOptions"]


@options_class
class VectorStoreOptions:
    """Options of ``vectorstore``: adapters ``db`` (default) and ``vecengine``.

    ``sqlfile`` and ``sqlvector`` are aliases of ``db``; ``vecengine`` is a vector server.
    """

    dsn: str = option("", doc="file path or SQL server URL")
    dedicated_pool: bool = option(False, doc="open a private pool instead of sharing by DSN")
    url: str = option("", doc="vecengine address")
    api_key: str = option("", secret=True, doc="backend credential")
    dimension: int = option(1536, doc="expected embedding dimension")
    allow_insecure: bool = option(False, doc="permit an http URL")
