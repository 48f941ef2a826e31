"""The Django admin page of the ``sqlserver`` scheduler's slot claims: a read-only list.

Claims are the scheduler's bookkeeping (which process fired which slot); editing one by
hand could fire a slot twice or never, so the page only lists and filters them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.contrib import admin

from .models import SchedulerClaim

__all__ = ["SchedulerClaimAdmin"]


@admin.register(SchedulerClaim)
class SchedulerClaimAdmin(admin.ModelAdmin):
    """Read-only list of slot claims, newest first."""

    list_display = ("name", "slot", "claimed", "claimed_by")
    list_filter = ("name",)
    search_fields = ("name", "claimed_by")
    ordering = ("-claimed_at",)
    list_per_page = 100

    @admin.display(description="claimed at", ordering="claimed_at")
    def claimed(self, obj: SchedulerClaim) -> datetime:
        """Return the claim time as an aware datetime."""
        return datetime.fromtimestamp(obj.claimed_at, UTC)

    def has_add_permission(self, request: Any) -> bool:
        """Claims are written by schedulers only."""
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        """Refuse: a claim edited by hand could fire a slot twice or never."""
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        """Refuse: deleting a claim would let a late scheduler fire its slot again."""
        return False
