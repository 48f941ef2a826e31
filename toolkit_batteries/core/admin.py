"""What the batteries' admin pages share: read-only rows with a purge action, and a
one-line preview of a stored payload.

Battery rows (queued messages, outbox rows, ...) are written by the battery, never by a
form, so the pages have no add or edit form; deleting goes through an explicit "purge"
action run in one transaction on the database the list was read from, instead of
Django's generic "delete selected".
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

__all__ = ["PREVIEW_LENGTH", "PurgeableAdmin", "preview"]

#: Characters of a payload shown in a list or a detail page.
PREVIEW_LENGTH = 80


def preview(body: bytes | memoryview | None, length: int = PREVIEW_LENGTH) -> str:
    """Return the start of a payload as one printable line, marked when cut."""
    raw = bytes(body or b"")
    text = raw[: length * 4].decode("utf-8", errors="replace")
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return text[:length] + "…" if len(text) > length or len(raw) > length * 4 else text


class PurgeableAdmin(admin.ModelAdmin):
    """Read-only rows, 100 a page, with "purge" in place of "delete selected"."""

    list_per_page = 100
    actions: tuple[str, ...] = ("purge",)

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        """Offer purge instead of Django's generic "delete selected"."""
        found = super().get_actions(request)
        found.pop("delete_selected", None)
        return found

    def has_add_permission(self, request: HttpRequest) -> bool:
        """Rows come from the battery, never from a form."""
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
