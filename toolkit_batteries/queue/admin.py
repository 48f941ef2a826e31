"""The Django admin pages of the ``db`` queue: messages and dead letters, requeue and purge.

Both lists filter by topic and state, and show a payload preview cut to
:data:`PREVIEW_LENGTH` characters (bytes decoded leniently, control characters escaped):
enough to recognise a job, never a whole document on screen. Rows are created by
``push`` and ``dead``, not by hand, so there is no add or edit form.

Actions:

* dead letters, "requeue": move the selected letters back to their topics as fresh
  messages (``attempts`` reset to 0, visible at once), the same statements as
  :meth:`Queue.requeue_dead <toolkit_batteries.queue.Queue.requeue_dead>`;
* dead letters and messages, "purge": delete the selected rows for good.

The actions run on the database the list was read from (``queryset.db``), inside one
transaction.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from .models import DeadLetter, Message, epoch_to_datetime

__all__ = ["PREVIEW_LENGTH", "DeadLetterAdmin", "MessageAdmin", "preview"]

#: Characters of a payload shown in a list or a detail page.
PREVIEW_LENGTH = 80


def preview(body: bytes | memoryview | None, length: int = PREVIEW_LENGTH) -> str:
    """Return the start of a payload as one printable line, marked when cut."""
    raw = bytes(body or b"")
    text = raw[: length * 4].decode("utf-8", errors="replace")
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return text[:length] + "…" if len(text) > length or len(raw) > length * 4 else text


def _database(queryset: QuerySet[Any]) -> Any:
    from toolkit_batteries.db import Database

    return Database(queryset.db)


class _QueueRowAdmin(admin.ModelAdmin):
    """What both pages share: read-only rows, payload preview, dates from epoch seconds."""

    list_per_page = 100
    search_fields = ("topic",)
    actions = ("purge",)

    @admin.display(description="payload")
    def payload(self, obj: Message | DeadLetter) -> str:
        """Return the truncated payload preview."""
        return preview(obj.body)

    @admin.display(description="size (bytes)")
    def size(self, obj: Message | DeadLetter) -> int:
        """Return the payload's size."""
        return len(bytes(obj.body or b""))

    @admin.display(description="enqueued", ordering="enqueued_at")
    def enqueued(self, obj: Message | DeadLetter) -> datetime | None:
        """Return the push time as a date."""
        return epoch_to_datetime(obj.enqueued_at)

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        """Offer purge instead of Django's generic "delete selected"."""
        found = super().get_actions(request)
        found.pop("delete_selected", None)
        return found

    def has_add_permission(self, request: HttpRequest) -> bool:
        """Messages come from ``push``, never from a form."""
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """Rows are read-only here; the actions are the way to change them."""
        return False

    @admin.action(description="Purge the selected rows for good", permissions=["delete"])
    def purge(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        """Delete the selected rows in one transaction."""
        from django.db import transaction

        with transaction.atomic(using=queryset.db):
            deleted, _ = queryset.delete()
        self.message_user(request, f"Purged {deleted} row(s).", messages.SUCCESS)


@admin.register(Message)
class MessageAdmin(_QueueRowAdmin):
    """Live messages: waiting, delayed or in flight."""

    list_display = ("id", "topic", "state", "attempts", "enqueued", "visible", "size", "payload")
    list_filter = ("topic", "leased")
    ordering = ("topic", "visible_at", "id")
    fields = ("id", "topic", "state", "attempts", "enqueued", "visible", "size", "payload")
    readonly_fields = fields

    @admin.display(description="state")
    def state(self, obj: Message) -> str:
        """Tell waiting, delayed, in flight and expired-lease messages apart."""
        now = time.time()
        if obj.leased:
            return "in flight" if obj.visible_at > now else "lease expired"
        return "delayed" if obj.visible_at > now else "ready"

    @admin.display(description="visible from", ordering="visible_at")
    def visible(self, obj: Message) -> datetime | None:
        """Return when the message may be delivered (or its lease ends)."""
        return epoch_to_datetime(obj.visible_at)


@admin.register(DeadLetter)
class DeadLetterAdmin(_QueueRowAdmin):
    """Dead letters: requeue them once the cause is fixed, or purge them."""

    list_display = ("id", "topic", "attempts", "died", "short_reason", "size", "payload")
    list_filter = ("topic",)
    ordering = ("-died_at", "-id")
    fields = ("id", "topic", "attempts", "enqueued", "died", "reason", "size", "payload")
    readonly_fields = fields
    actions = ("requeue", "purge")

    @admin.display(description="died", ordering="died_at")
    def died(self, obj: DeadLetter) -> datetime | None:
        """Return when the message was moved to the dead list."""
        return epoch_to_datetime(obj.died_at)

    @admin.display(description="reason")
    def short_reason(self, obj: DeadLetter) -> str:
        """Return the reason, cut to one preview line."""
        return preview(obj.reason.encode("utf-8"))

    @admin.action(description="Requeue the selected dead letters", permissions=["delete"])
    def requeue(self, request: HttpRequest, queryset: QuerySet[DeadLetter]) -> None:
        """Move the selected letters back to their topics, attempts reset."""
        from .adapters.db import requeue_dead_letters

        ids = list(queryset.values_list("id", flat=True))
        moved = requeue_dead_letters(_database(queryset), time.time(), ids=ids)
        self.message_user(request, f"Requeued {moved} dead letter(s).", messages.SUCCESS)
