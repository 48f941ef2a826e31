"""The ``db`` cache adapter's table: one row per live (or not yet purged) entry.

``manage.py migrate`` creates it; the adapter never runs DDL. Every ``db`` cache of the
project shares the table, each in its own ``namespace`` (the cache's ``LOCATION``, i.e.
the ``TOOLKIT`` instance), so ``clear()`` on one cache leaves the others' rows alone.
Writes are raw upserts (``INSERT ... ON CONFLICT (namespace, cache_key)``) on Django's
connection of the database the cache names; the model gives the table its migration.
"""

from __future__ import annotations

from django.db import models

from toolkit_batteries.core.tables import table_meta

__all__ = ["CacheEntry"]


class CacheEntry(models.Model):
    """One cached value: ``value`` is the serialized bytes, ``expires_at`` Unix seconds."""

    namespace = models.CharField(max_length=200)
    cache_key = models.TextField()
    value = models.BinaryField()
    #: Unix seconds; NULL never expires.
    expires_at = models.FloatField(null=True, blank=True)

    Meta = table_meta(
        "toolkit_cache_entry",
        "cache entry",
        "cache entries",
        unique={"toolkit_cache_entry_key": ("namespace", "cache_key")},
        indexes=[models.Index(fields=["expires_at"], name="toolkit_cache_expires_at")],
    )

    def __str__(self) -> str:
        return f"{self.namespace}: {self.cache_key}"
