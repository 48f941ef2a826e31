"""The Django admin page of the ``db`` vectorstore adapter: a read-only list of records.

Rows are written by the store (through its dimension and input checks), so the page
lists, filters and searches them; it never edits or deletes (a delete here would skip
the namespace version the SQLite readers watch: use the store's ``delete``). The
vector itself is not shown (hundreds of floats); its dimension and length are.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from .models import StoredVector

__all__ = ["StoredVectorAdmin"]


@admin.register(StoredVector)
class StoredVectorAdmin(admin.ModelAdmin):
    """Records by store, namespace and id, with their dimension and metadata."""

    list_display = ("record_id", "store", "namespace", "dimension", "norm", "updated_at")
    list_filter = ("store", "namespace")
    search_fields = ("record_id",)
    ordering = ("store", "namespace", "record_id")
    list_per_page = 100
    fields = ("store", "namespace", "record_id", "dimension", "norm", "metadata", "updated_at")
    readonly_fields = fields

    def has_add_permission(self, request: Any) -> bool:
        """Refuse: records are written by the store, which checks their dimension."""
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        """Refuse: an edited record would bypass the store's checks."""
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        """Refuse: deletes go through the store, which tells its readers (``delete``)."""
        return False
