"""The Django admin page of the delivery log: read-only, never a secret or a body.

Rows are written by the adapters; editing one would only make the log lie, so the page
lists, filters and searches. The secret is never stored, and the body only as its size.
"""

from __future__ import annotations

from django.contrib import admin

from toolkit_batteries.core.admin import ReadOnlyAdmin

from .models import WebhookDelivery

__all__ = ["WebhookDeliveryAdmin"]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    """Deliveries newest first: event, target, status, attempts, last error, times."""

    list_display = (
        "delivery_id",
        "event",
        "target",
        "status",
        "attempts",
        "response_status",
        "short_error",
        "created_at",
        "updated_at",
    )
    list_filter = ("status", "instance", "adapter", "event")
    search_fields = ("delivery_id", "event", "target")
    ordering = ("-created_at", "-id")
    fields = (
        "delivery_id",
        "instance",
        "adapter",
        "event",
        "target",
        "status",
        "attempts",
        "response_status",
        "last_error",
        "body_size",
        "created_at",
        "updated_at",
        "delivered_at",
    )
    readonly_fields = fields

    @admin.display(description="last error")
    def short_error(self, obj: WebhookDelivery) -> str:
        """Return the last error cut to one line of 80 characters."""
        text = " ".join((obj.last_error or "").split())
        return text[:80] + "…" if len(text) > 80 else text
