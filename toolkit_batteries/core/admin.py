"""What the batteries' admin pages share: read-only rows with a purge action, and a
one-line preview of a stored payload.

Battery rows (queued messages, outbox rows, ...) are written by the battery, never by a
form, so the pages have no add or edit form; deleting goes through an explicit "purge"
action run in one transaction on the database the list was read from, instead of
Django's generic "delete selected".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

__all__ = [
    "PREVIEW_LENGTH",
    "PurgeableAdmin",
    "ReadOnlyAdmin",
    "ReadOnlyInline",
    "epoch_column",
    "preview",
]

#: Characters of a payload shown in a list or a detail page.
PREVIEW_LENGTH = 80


def preview(body: bytes | memoryview | None, length: int = PREVIEW_LENGTH) -> str:
    """Return the start of a payload as one printable line, marked when cut."""
    raw = bytes(body or b"")
    text = raw[: length * 4].decode("utf-8", errors="replace")
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return text[:length] + "…" if len(text) > length or len(raw) > length * 4 else text


def epoch_column(
    field: str,
    description: str,
    render: Callable[[float], Any],
    *,
    ordering: str | None = None,
) -> Callable[[Any, Any], Any]:
    """Return an admin column showing the epoch-seconds ``field`` through ``render``.

    Battery rows store times as epoch seconds; each page shows them its own way (text or
    a datetime), and an unset time (0 or ``None``) is passed to ``render`` unchanged.
    """

    def column(self: Any, obj: Any) -> Any:
        return render(getattr(obj, field))

    column.__name__ = field
    return admin.display(description=description, ordering=ordering)(column)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written by the battery only, 100 a page: no add form, no edit form.

    Editing a row by hand could make the battery's books lie (skip a state transition,
    forge a delivery); the page lists, filters, searches and shows.
    """

    list_per_page = 100
    #: ``False`` where a delete must go through the battery (it keeps books a bare row
    #: delete would skip); the page then refuses it too.
    deletable: bool = True

    def has_add_permission(self, request: HttpRequest) -> bool:
        """Rows come from the battery, never from a form."""
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """Rows are read-only here; the actions are the way to change them."""
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """Django's own rule, unless the page declares ``deletable = False``."""
        return self.deletable and super().has_delete_permission(request, obj)


class ReadOnlyInline(admin.TabularInline):
    """A battery's child rows under their parent: shown, never added, edited or deleted."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """Child rows come from the battery, never from a form."""
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """Child rows are read-only here."""
        return False


class PurgeableAdmin(ReadOnlyAdmin):
    """Read-only rows, 100 a page, with "purge" in place of "delete selected"."""

    actions: tuple[str, ...] = ("purge",)

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        """Offer purge instead of Django's generic "delete selected"."""
        found = super().get_actions(request)
        found.pop("delete_selected", None)
        return found

    @admin.action(description="Purge the selected rows for good", permissions=["delete"])
    def purge(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        """Delete the selected rows in one transaction."""
        from django.db import transaction

        with transaction.atomic(using=queryset.db):
            deleted, _ = queryset.delete()
        self.message_user(request, f"Purged {deleted} row(s).", messages.SUCCESS)
