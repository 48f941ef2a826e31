"""The Django admin page of the billing battery: a read-only list of subscriptions.

Rows mirror the provider and are written only through the state machine, so the page
lists, filters and searches; it never adds or edits (a hand edit could skip a transition
the provider never made). Nothing secret is stored, so nothing is hidden.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.contrib import admin

from .models import BillingSubscription

__all__ = ["BillingSubscriptionAdmin"]


def _when(seconds: float | None) -> str:
    if not seconds:
        return "-"
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@admin.register(BillingSubscription)
class BillingSubscriptionAdmin(admin.ModelAdmin):
    """Subscriptions, most recently changed first."""

    list_display = (
        "provider_id",
        "instance",
        "adapter",
        "customer_id",
        "price_id",
        "status",
        "cancel_at_period_end",
        "period_end",
        "updated",
    )
    list_filter = ("instance", "adapter", "status", "cancel_at_period_end")
    search_fields = ("provider_id", "customer_id", "reference")
    ordering = ("-updated_at",)
    list_per_page = 100
    readonly_fields = (
        "instance",
        "adapter",
        "provider_id",
        "reference",
        "customer_id",
        "price_id",
        "status",
        "cancel_at_period_end",
        "period_end",
        "last_event",
        "created",
        "updated",
    )
    fields = readonly_fields

    @admin.display(description="period end")
    def period_end(self, obj: BillingSubscription) -> str:
        return _when(obj.current_period_end)

    @admin.display(description="last event")
    def last_event(self, obj: BillingSubscription) -> str:
        return _when(obj.last_event_at)

    @admin.display(description="created", ordering="created_at")
    def created(self, obj: BillingSubscription) -> str:
        return _when(obj.created_at)

    @admin.display(description="updated", ordering="updated_at")
    def updated(self, obj: BillingSubscription) -> str:
        return _when(obj.updated_at)

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False
