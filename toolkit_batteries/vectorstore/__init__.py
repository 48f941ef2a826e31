"""The ``vectorstore`` battery: embedding storage and similarity search.

Get the configured store from the registry (``services.vectorstore()``) or a container
(``container.vectorstore()``); pick ``db`` (the default: SQLite through ``sqlite-vec``,
PostgreSQL through ``pgvector``) or ``vecengine`` (a dedicated vector database) in
settings::

    store = services.vectorstore()
    store.upsert([("doc-1", embedding, {"lang": "en"})], namespace="docs")
    store.query(question, k=10, metric="cosine", filter={"lang": "en"}, namespace="docs")
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base=(
        "DimensionMismatchError InvalidVectorError MAX_BATCH METRICS Match Record VectorStore "
        "VectorStoreError"
    ),
)
