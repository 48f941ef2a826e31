"""Options of the ``vectorstore`` service (embedding storage and similarity search)."""

from __future__ import annotations

from toolkit_batteries.core.option_kinds import between, sql_target, url
from toolkit_batteries.core.options import option, options_class

from .base import MAX_DIMENSION

__all__ = ["VectorStoreOptions"]


@options_class
class VectorStoreOptions:
    """Options of ``vectorstore``: adapters ``db`` (default) and ``vecengine``.

    ``sqlfile`` and ``sqlvector`` are aliases of ``db``; ``vecengine`` is a vector server.
    """

    __checks__ = (
        sql_target("toolkit_vectorstore.E002", adapters=("db",)).on("dsn"),
        between(
            "toolkit_vectorstore.E003",
            1,
            MAX_DIMENSION,
            hint="set it to your embedding model's output size (1536 by default)",
        ).on("dimension"),
        url(
            "toolkit_vectorstore.E004",
            adapters=("vecengine",),
            private="*",
            skip_prefix="file:///",
            hint="leave url empty (in-process engine), use file:///<dir> or "
            "https://host:port (http:// needs allow_insecure)",
        ).on("url"),
    )

    dsn: str = option("", doc="file path or SQL server URL")
    dedicated_pool: bool = option(False, doc="open a private pool instead of sharing by DSN")
    url: str = option("", doc="vecengine address")
    api_key: str = option("", secret=True, doc="backend credential")
    dimension: int = option(1536, doc="expected embedding dimension")
    allow_insecure: bool = option(False, doc="permit an http URL")
    index: str = option(
        "hnsw",
        choices=("hnsw", "ivfflat", "none"),
        doc="approximate index create_index() builds and queries use (db on pgvector)",
    )
    index_metric: str = option(
        "cosine", choices=("cosine", "l2", "ip"), doc="the metric the approximate index serves"
    )
    ef_search: int = option(200, min=1, max=1000, doc="HNSW candidates per query (recall)")
    probes: int = option(10, min=1, max=32768, doc="IVFFlat lists visited per query (recall)")
    index_build_memory: int = option(
        0,
        min=0,
        max=65536,
        doc="MiB of maintenance_work_mem create_index() builds with (0: the server's setting)",
    )
