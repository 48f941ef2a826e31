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

from toolkit_batteries.core.admin import PREVIEW_LENGTH, PurgeableAdmin, preview

from .models import DeadLetter, Message, epoch_to_datetime

__all__ = ["PREVIEW_LENGTH", "DeadLetterAdmin", "MessageAdmin", "preview"]


def _database(queryset: QuerySet[Any]) -> Any:
    from toolkit_batteries.db import Database

    return Database(queryset.db)


class _QueueRowAdmin(PurgeableAdmin):
    """What both pages share: read-only rows, payload preview, dates from epoch seconds."""

    search_fields = ("topic",)

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
