"""The Django admin pages of payments and refunds: read-only, never a secret.

Rows move only through the service (so the state machine holds and the provider
agrees); editing one here would make the books lie, so the pages list, filter and
search. No key, webhook secret or client secret is ever stored, so none can show.
"""

from __future__ import annotations

from django.contrib import admin

from toolkit_batteries.core.admin import ReadOnlyAdmin, ReadOnlyInline

from .models import PaymentRecord, RefundRecord

__all__ = ["PaymentRecordAdmin", "RefundRecordAdmin"]


class RefundInline(ReadOnlyInline):
    """The refunds of a payment, under it."""

    model = RefundRecord
    fields = ("provider_id", "amount", "status", "reason", "created_at", "updated_at")
    readonly_fields = fields


@admin.register(PaymentRecord)
class PaymentRecordAdmin(ReadOnlyAdmin):
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
class RefundRecordAdmin(ReadOnlyAdmin):
    """Refunds newest first."""

    list_display = ("id", "payment", "amount", "status", "provider_id", "created_at")
    list_filter = ("status",)
    search_fields = ("id", "provider_id", "payment__id")
    ordering = ("-created_at",)
    fields = ("id", "payment", "provider_id", "amount", "status", "reason", "created_at")
    readonly_fields = fields
