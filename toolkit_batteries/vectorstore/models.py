"""The ``db`` vectorstore adapter's table, as a Django model (``manage.py migrate`` creates it).

One row per record of one store instance and namespace: ``(store, namespace,
record_id)`` is unique, which is what lets an upsert be one ``INSERT ... ON CONFLICT``.
``norm`` is the vector's length, stored so that inner product and the cosine distance of
a zero vector are answered without reading the vector twice. ``dimension`` is kept per
row, so a store reopened with another ``dimension`` never compares vectors of different
lengths.

The migration creates PostgreSQL's ``vector`` extension first when the server offers it
(:mod:`.migrations.0001_initial`); the embedding column's type follows
(:mod:`.fields`).
"""

from __future__ import annotations

from django.db import models

from toolkit_batteries.core.tables import table_meta

from .fields import EmbeddingField

__all__ = ["NamespaceVersion", "StoredVector"]


class StoredVector(models.Model):
    """One embedding with its metadata."""

    store = models.CharField(max_length=64, help_text="the store instance (TOOLKIT name)")
    namespace = models.CharField(max_length=64)
    record_id = models.CharField(max_length=255)
    dimension = models.PositiveIntegerField()
    norm = models.FloatField(help_text="Euclidean length of the vector")
    embedding = EmbeddingField()
    metadata = models.JSONField(default=dict, blank=True)
    updated_at = models.FloatField(help_text="Unix seconds")
    version = models.BigIntegerField(
        default=0, help_text="the namespace version that wrote it (SQLite; 0 on PostgreSQL)"
    )

    Meta = table_meta(
        "toolkit_vectorstore_vector",
        "stored vector",
        unique={"toolkit_vectorstore_vector_id": ("store", "namespace", "record_id")},
        indexes=[
            models.Index(
                fields=["store", "namespace", "version"], name="toolkit_vectorstore_version"
            )
        ],
    )

    def __str__(self) -> str:
        return f"{self.store}/{self.namespace}: {self.record_id}"


class NamespaceVersion(models.Model):
    """Counters bumped with every write to a namespace on SQLite.

    The SQLite reader keeps an in-memory copy of each namespace it searches. ``version``
    moves with every write and is stamped on the rows written, so the reader fetches
    only rows newer than its copy; ``purged`` moves with every delete, which makes the
    reader load the namespace again. Both commit in the same transaction as the rows, so
    the copy can never be newer or older than what it reports. PostgreSQL stores skip it
    (pgvector needs no copy, and the counter row would serialise concurrent writers).
    """

    store = models.CharField(max_length=64, help_text="the store instance (TOOLKIT name)")
    namespace = models.CharField(max_length=64)
    version = models.BigIntegerField(default=0)
    purged = models.BigIntegerField(default=0)

    Meta = table_meta(
        "toolkit_vectorstore_namespace",
        "vector namespace version",
        unique={"toolkit_vectorstore_namespace_key": ("store", "namespace")},
    )

    def __str__(self) -> str:
        return f"{self.store}/{self.namespace} v{self.version}"
