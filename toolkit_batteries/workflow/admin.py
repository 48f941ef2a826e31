"""Django admin pages of the ``db`` workflow adapter: runs with their steps and signals.

Runs are the battery's bookkeeping: editing one by hand could skip a step or run one
twice, so the pages list, filter, search and show, and never change a row (cancel and
resume go through the service, which queues the work). Inputs, results and signal
payloads may hold a caller's data, so the list shows only their size; the detail page
shows them, read-only, to staff with the view permission. Deleting a finished run is
allowed (its steps and signals go with it).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from django.contrib import admin

from toolkit_batteries.core.admin import ReadOnlyAdmin, ReadOnlyInline, epoch_column

from .models import WorkflowRun, WorkflowSignal, WorkflowStep
from .records import TERMINAL

__all__ = ["WorkflowRunAdmin"]


def _when(seconds: float) -> datetime | None:
    return datetime.fromtimestamp(seconds, UTC) if seconds else None


class WorkflowStepInline(ReadOnlyInline):
    model = WorkflowStep
    fields = ("index", "name", "status", "attempts", "error", "result")
    readonly_fields = fields
    ordering = ("index",)


class WorkflowSignalInline(ReadOnlyInline):
    model = WorkflowSignal
    fields = ("name", "payload")
    readonly_fields = fields


#: Where a run stands, shown first in both the list and the detail page.
_RUN_STATE = ("id", "workflow", "namespace", "status", "current", "attempt", "waiting_for")
#: Its lease and times, shown after the state in both.
_RUN_TIMES = ("leased_until", "created", "updated")


@admin.register(WorkflowRun)
class WorkflowRunAdmin(ReadOnlyAdmin):
    """Runs newest first: workflow, status, step, attempts, lease, times."""

    list_display = (*_RUN_STATE, *_RUN_TIMES, "input_size")
    list_filter = ("namespace", "workflow", "status")
    search_fields = ("id", "workflow")
    ordering = ("-created_at",)
    fields = (*_RUN_STATE, "cancel_requested", "error", "input", "result", *_RUN_TIMES)
    readonly_fields = fields
    inlines = (WorkflowStepInline, WorkflowSignalInline)

    @admin.display(description="lease until")
    def leased_until(self, obj: WorkflowRun) -> datetime | None:
        """Return the end of the current worker's lease (empty when no worker holds it)."""
        return _when(obj.lease_until) if obj.lease_owner else None

    created = epoch_column("created_at", "created", _when, ordering="created_at")
    updated = epoch_column("updated_at", "updated", _when, ordering="updated_at")

    @admin.display(description="input size (bytes)")
    def input_size(self, obj: WorkflowRun) -> int:
        """Return the size of the run's input, never the input itself."""
        return len(json.dumps(obj.input)) if obj.input is not None else 0

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        """Allow deleting finished runs only: a live run's worker would lose its row."""
        if obj is None:
            return super().has_delete_permission(request)
        return obj.status in TERMINAL and super().has_delete_permission(request, obj)
