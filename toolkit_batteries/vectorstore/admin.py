"""The Django admin page of the ``db`` vectorstore adapter: a read-only list of records.

Rows are written by the store (through its dimension and input checks), so the page
lists, filters and searches them; it never edits or deletes (a delete here would skip
the namespace version the SQLite readers watch: use the store's ``delete``). The
vector itself is not shown (hundreds of floats); its dimension and length are.
"""

from __future__ import annotations

from django.contrib import admin

from toolkit_batteries.core.admin import ReadOnlyAdmin

from .models import StoredVector

__all__ = ["StoredVectorAdmin"]


@admin.register(StoredVector)
class StoredVectorAdmin(ReadOnlyAdmin):
    """Records by store, namespace and id, with their dimension and metadata.

    Records are written by the store, which checks their dimension, and deleted through
    it, which tells its readers (``delete``): the page neither edits nor deletes them.
    """

    list_display = ("record_id", "store", "namespace", "dimension", "norm", "updated_at")
    list_filter = ("store", "namespace")
    search_fields = ("record_id",)
    ordering = ("store", "namespace", "record_id")
    deletable = False
    fields = ("store", "namespace", "record_id", "dimension", "norm", "metadata", "updated_at")
    readonly_fields = fields
