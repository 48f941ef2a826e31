"""The Django admin page of the ``sqlserver`` scheduler's slot claims: a read-only list.

Claims are the scheduler's bookkeeping (which process fired which slot); editing one by
hand could fire a slot twice or never, so the page only lists and filters them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.contrib import admin

from toolkit_batteries.core.admin import ReadOnlyAdmin, epoch_column

from .models import SchedulerClaim

__all__ = ["SchedulerClaimAdmin"]


def _when(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


@admin.register(SchedulerClaim)
class SchedulerClaimAdmin(ReadOnlyAdmin):
    """Read-only list of slot claims, newest first.

    Claims are written by schedulers only; one edited by hand could fire a slot twice or
    never (:class:`~toolkit_batteries.core.admin.ReadOnlyAdmin` has no add or edit form).
    """

    list_display = ("name", "slot", "claimed", "claimed_by")
    list_filter = ("name",)
    search_fields = ("name", "claimed_by")
    ordering = ("-claimed_at",)
    #: Deleting a claim would let a late scheduler fire its slot again.
    deletable = False

    claimed = epoch_column("claimed_at", "claimed at", _when, ordering="claimed_at")
