"""The Django admin pages of payments and refunds: read-only, never a secret.

Rows move only through the service (so the state machine holds and the provider
agrees); editing one here would make the books lie, so the pages list, filter and
search. No key, webhook secret or client secret is ever stored, so none can show.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from .models import PaymentRecord, RefundRecord

__all__ = ["PaymentRecordAdmin", "RefundRecordAdmin"]


class _ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False


class RefundInline(admin.TabularInline):
    """The refunds of a payment, under it."""

    model = RefundRecord
    fields = ("provider_id", "amount", "status", "reason", "created_at", "updated_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(PaymentRecord)
class PaymentRecordAdmin(_ReadOnly):
    """Payments newest first: amount, currency, state, provider id, reference."""

    list_display = (
        "id",
        "amount",
        "currency",
        "state",
        "amount_refunded",
        "adapter",
        "provider_id",
        "reference",
        "created_at",
    )
    list_filter = ("state", "instance", "adapter", "currency")
    search_fields = ("id", "provider_id", "reference")
    ordering = ("-created_at",)
    list_per_page = 100
    fields = (
        "id",
        "instance",
        "adapter",
        "provider_id",
        "provider_status",
        "amount",
        "currency",
        "state",
        "amount_refunded",
        "reference",
        "description",
        "metadata",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields
    inlines = (RefundInline,)


@admin.register(RefundRecord)
class RefundRecordAdmin(_ReadOnly):
    """Refunds newest first."""

    list_display = ("id", "payment", "amount", "status", "provider_id", "created_at")
    list_filter = ("status",)
    search_fields = ("id", "provider_id", "payment__id")
    ordering = ("-created_at",)
    fields = ("id", "payment", "provider_id", "amount", "status", "reason", "created_at")
    readonly_fields = fields
