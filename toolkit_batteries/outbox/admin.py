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
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from .base import to_datetime
from .models import DEAD, PENDING, InboxMessage, OutboxMessage

__all__ = ["InboxMessageAdmin", "OutboxMessageAdmin", "preview"]

#: Characters of a payload or error shown in a list or a detail page.
PREVIEW_LENGTH = 80


def preview(body: bytes | memoryview | None, length: int = PREVIEW_LENGTH) -> str:
    """Return the start of a payload as one printable line, marked when cut."""
    raw = bytes(body or b"")
    text = raw[: length * 4].decode("utf-8", errors="replace")
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return text[:length] + "…" if len(text) > length or len(raw) > length * 4 else text


class _ReadOnly(admin.ModelAdmin):
    list_per_page = 100
    actions: tuple[str, ...] = ("purge",)

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        """Offer purge instead of Django's generic "delete selected"."""
        found = super().get_actions(request)
        found.pop("delete_selected", None)
        return found

    def has_add_permission(self, request: HttpRequest) -> bool:
        """Rows come from ``publish`` and the relay, never from a form."""
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """Rows are read-only here; the actions change them."""
        return False

    @admin.action(description="Purge the selected rows for good", permissions=["delete"])
    def purge(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        """Delete the selected rows in one transaction."""
        from django.db import transaction

        with transaction.atomic(using=queryset.db):
            deleted, _ = queryset.delete()
        self.message_user(request, f"Purged {deleted} row(s).", messages.SUCCESS)


@admin.register(OutboxMessage)
class OutboxMessageAdmin(_ReadOnly):
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
class InboxMessageAdmin(_ReadOnly):
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
