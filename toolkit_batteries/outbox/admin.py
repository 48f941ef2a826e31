"""The Django admin pages of the outbox: messages (pending, sent, dead) and inbox marks.

Rows come from ``publish`` and the relay, never from a form, so there is no add or edit
form. The messages list filters by status and topic and shows a payload preview cut to
80 characters. Actions, on the database the list was read from:

* "requeue": send the selected dead messages back to pending (``attempts`` reset), the
  same statement as ``outbox_relay dlq requeue``;
* "purge": delete the selected rows for good.
"""

from __future__ import annotations

import time
from datetime import datetime

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from toolkit_batteries.core.admin import PurgeableAdmin, preview

from .base import to_datetime
from .models import DEAD, PENDING, InboxMessage, OutboxMessage

__all__ = ["InboxMessageAdmin", "OutboxMessageAdmin", "preview"]


@admin.register(OutboxMessage)
class OutboxMessageAdmin(PurgeableAdmin):
    """Published messages: pending (or claimed), sent, dead."""

    list_display = ("id", "topic", "key", "status", "attempts", "created", "sent", "error")
    list_filter = ("status", "topic")
    search_fields = ("topic", "key", "message_id")
    ordering = ("-id",)
    fields = (
        "id",
        "message_id",
        "topic",
        "key",
        "status",
        "attempts",
        "created",
        "sent",
        "claimed",
        "locked_by",
        "headers",
        "size",
        "payload_preview",
        "last_error",
    )
    readonly_fields = fields
    actions = ("requeue", "purge")

    @admin.display(description="created", ordering="created_at")
    def created(self, obj: OutboxMessage) -> datetime | None:
        """Return the publish time."""
        return to_datetime(obj.created_at)

    @admin.display(description="sent", ordering="sent_at")
    def sent(self, obj: OutboxMessage) -> datetime | None:
        """Return when the relay published it."""
        return to_datetime(obj.sent_at)

    @admin.display(description="claimed until")
    def claimed(self, obj: OutboxMessage) -> datetime | None:
        """Return the end of a relay's lease, while one holds it."""
        return to_datetime(obj.locked_until) if obj.locked_until > time.time() else None

    @admin.display(description="size (bytes)")
    def size(self, obj: OutboxMessage) -> int:
        """Return the payload's size."""
        return len(bytes(obj.payload or b""))

    @admin.display(description="payload")
    def payload_preview(self, obj: OutboxMessage) -> str:
        """Return the truncated payload preview."""
        return preview(obj.payload)

    @admin.display(description="last error")
    def error(self, obj: OutboxMessage) -> str:
        """Return the last publish error, cut to one line."""
        return preview(obj.last_error.encode("utf-8"))

    @admin.action(description="Requeue the selected dead messages", permissions=["delete"])
    def requeue(self, request: HttpRequest, queryset: QuerySet[OutboxMessage]) -> None:
        """Send the selected dead messages back to pending, attempts reset."""
        moved = queryset.filter(status=DEAD).update(
            status=PENDING, attempts=0, available_at=time.time(), locked_until=0, locked_by=""
        )
        self.message_user(request, f"Requeued {moved} dead message(s).", messages.SUCCESS)


@admin.register(InboxMessage)
class InboxMessageAdmin(PurgeableAdmin):
    """Message ids each consumer has processed (the deduplication record)."""

    list_display = ("consumer", "message_id", "received")
    list_filter = ("consumer",)
    search_fields = ("consumer", "message_id")
    ordering = ("-received_at",)
    fields = ("consumer", "message_id", "received")
    readonly_fields = fields

    @admin.display(description="received", ordering="received_at")
    def received(self, obj: InboxMessage) -> datetime | None:
        """Return when the consumer processed it."""
        return to_datetime(obj.received_at)
