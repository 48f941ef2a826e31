"""The Django admin page of the billing battery: a read-only list of subscriptions.

Rows mirror the provider and are written only through the state machine, so the page
lists, filters and searches; it never adds or edits (a hand edit could skip a transition
the provider never made). Nothing secret is stored, so nothing is hidden.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.contrib import admin

from toolkit_batteries.core.admin import ReadOnlyAdmin, epoch_column

from .models import BillingSubscription

__all__ = ["BillingSubscriptionAdmin"]


def _when(seconds: float | None) -> str:
    if not seconds:
        return "-"
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@admin.register(BillingSubscription)
class BillingSubscriptionAdmin(ReadOnlyAdmin):
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

    period_end = epoch_column("current_period_end", "period end", _when)
    last_event = epoch_column("last_event_at", "last event", _when)
    created = epoch_column("created_at", "created", _when, ordering="created_at")
    updated = epoch_column("updated_at", "updated", _when, ordering="updated_at")
