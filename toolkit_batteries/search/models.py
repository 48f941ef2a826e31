"""The ``db`` search adapter's table, as a Django model (``manage.py migrate`` creates it).

One row per indexed document of one service instance and index: ``(instance,
index_name, doc_id)`` is unique, so indexing a document again replaces it in one
``INSERT ... ON CONFLICT DO UPDATE``. ``body`` is the searched text (every field joined);
``fields`` and ``filters`` are kept as JSON for results and exact-match filters.

The full-text index is not a Django field, because Django has no portable one; the
migration adds it per database with SQL:

* **SQLite**: ``toolkit_search_fts``, an FTS5 virtual table over ``body`` (external
  content: it indexes this table's rows and stores no second copy of the text), kept in
  step by three triggers; tokenizer ``porter unicode61 remove_diacritics 2``.
* **PostgreSQL**: a ``search_vector tsvector`` column filled by a trigger from
  ``to_tsvector(language, body)`` and a GIN index on it. ``language`` is the row's text
  search configuration (the instance's ``language`` option when it was written).

Every write, by the battery or by hand, keeps the full-text index in step, because the
triggers do it.
"""

from __future__ import annotations

from django.db import models

from toolkit_batteries.core.tables import table_meta

__all__ = ["FTS_TABLE", "SearchDocument"]

#: The SQLite FTS5 virtual table's name (created by the migration on SQLite only).
FTS_TABLE = "toolkit_search_fts"


class SearchDocument(models.Model):
    """One indexed document."""

    instance = models.CharField(max_length=64, help_text="the search instance (TOOLKIT name)")
    index_name = models.CharField(max_length=64)
    doc_id = models.CharField(max_length=255)
    language = models.CharField(
        max_length=64, default="english", help_text="PostgreSQL text search configuration"
    )
    fields = models.JSONField(help_text="the document's text fields")
    filters = models.JSONField(default=dict, blank=True, help_text="exact-match metadata")
    body = models.TextField(help_text="the searched text: every field, joined")
    updated_at = models.DateTimeField(auto_now=True)

    Meta = table_meta(
        "toolkit_search_document",
        "search document",
        unique={"toolkit_search_document_key": ("instance", "index_name", "doc_id")},
    )

    def __str__(self) -> str:
        return f"{self.instance}/{self.index_name}: {self.doc_id}"
