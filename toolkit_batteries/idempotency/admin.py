"""The Django admin page of the ``db`` idempotency adapter: a read-only list of records.

A record is the battery's bookkeeping: editing one by hand could replay a wrong answer or
run a request twice, so the page only lists, filters and searches. Stored responses are
a caller's data (an order, a profile), so the page shows their size and the status of
the stored HTTP answer, never the body; the owner token is never shown. Deleting a
record is allowed: it makes the next retry with that key run again.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from django.contrib import admin

from toolkit_batteries.core.admin import ReadOnlyAdmin, epoch_column

from .models import IdempotencyRecord, split_http_key

__all__ = ["IdempotencyRecordAdmin"]


def _when(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(ReadOnlyAdmin):
    """Records newest first: key, scope hash, state, stored status, times, size.

    Records are written by the store only; an edited one could replay a wrong answer
    (:class:`~toolkit_batteries.core.admin.ReadOnlyAdmin` has no add or edit form).
    """

    list_display = (
        "client_key",
        "scope_hash",
        "instance",
        "state",
        "http_status",
        "created",
        "expires",
        "response_size",
    )
    list_filter = ("instance", "state")
    search_fields = ("key",)
    ordering = ("-created_at",)
    fields = (
        "instance",
        "client_key",
        "scope_hash",
        "state",
        "http_status",
        "fingerprint",
        "created",
        "expires",
        "response_size",
    )
    readonly_fields = fields

    @admin.display(description="key", ordering="key")
    def client_key(self, obj: IdempotencyRecord) -> str:
        """Return the caller's key (without the HTTP layer's scope prefix)."""
        return split_http_key(obj.key)[1]

    @admin.display(description="scope hash")
    def scope_hash(self, obj: IdempotencyRecord) -> str:
        """Return the hash of the caller's scope (empty for keys stored from code)."""
        return split_http_key(obj.key)[0]

    @admin.display(description="stored status")
    def http_status(self, obj: IdempotencyRecord) -> int | None:
        """Return the status of a stored HTTP answer, read from its head, never the body."""
        return stored_status(obj.response)

    created = epoch_column("created_at", "created", _when, ordering="created_at")
    expires = epoch_column("expires_at", "expires", _when, ordering="expires_at")

    @admin.display(description="response size (bytes)")
    def response_size(self, obj: IdempotencyRecord) -> int:
        """Return the stored response's size, never the response."""
        return len(obj.response or b"")


def stored_status(payload: Any) -> int | None:
    """Return the HTTP status a stored record replays, or ``None`` if it holds no HTTP answer.

    The HTTP layer stores ``b"b"`` + a JSON head line + the body; only the head is read.
    """
    if payload is None:
        return None
    raw = bytes(payload)
    if raw[:1] != b"b":
        return None
    head, sep, _ = raw[1:].partition(b"\n")
    if not sep:
        return None
    try:
        status = json.loads(head).get("status")
    except (ValueError, AttributeError):
        return None
    return status if isinstance(status, int) else None
