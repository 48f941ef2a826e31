"""The Django admin page of the ``db`` search adapter: a read-only list of documents.

Rows are written by the battery (and indexed by the migration's triggers); editing one
here would be harmless to the full-text index but would drift from the source of truth
that fed it, so the page lists, filters and searches only. Deleting is allowed: it
removes the document from search results.
"""

from __future__ import annotations

from django.contrib import admin

from toolkit_batteries.core.admin import ReadOnlyAdmin

from .models import SearchDocument

__all__ = ["SearchDocumentAdmin"]


@admin.register(SearchDocument)
class SearchDocumentAdmin(ReadOnlyAdmin):
    """Documents by instance, index and id; read-only, the indexed source owns the text."""

    list_display = ("doc_id", "index_name", "instance", "language", "updated_at")
    list_filter = ("instance", "index_name", "language")
    search_fields = ("doc_id",)
    ordering = ("instance", "index_name", "doc_id")
    fields = ("instance", "index_name", "doc_id", "language", "fields", "filters", "updated_at")
    readonly_fields = fields
