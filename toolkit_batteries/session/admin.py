"""The Django admin page of the ``db`` session adapter: sessions listed, secrets never shown.

A session id is a bearer credential (the ``auth`` battery's ``session`` tokens are session
ids) and the data is whatever the application stored, so the page shows a fingerprint of
the id, the expiry, whether the session is still live and the data's size, and nothing
else. Sessions cannot be added or edited here; deleting one ends it (a forced logout).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from django.contrib import admin

from toolkit_batteries.core.admin import ReadOnlyAdmin

from .models import SessionRecord, fingerprint

__all__ = ["SessionRecordAdmin"]


@admin.register(SessionRecord)
class SessionRecordAdmin(ReadOnlyAdmin):
    """Read-only list of sessions; delete is the one action (ends the session).

    Sessions are created by logins, never by hand, and their data is the application's.
    """

    list_display = ("session", "instance", "kind", "expires", "live", "size")
    list_filter = ("instance",)
    ordering = ("-expires_at",)
    # Nothing searchable or filterable by id or data: both are secrets.
    search_fields: tuple[str, ...] = ()
    fields = ("session", "instance", "kind", "expires", "live", "size")
    readonly_fields = fields

    @admin.display(description="session")
    def session(self, obj: SessionRecord) -> str:
        """Return a fingerprint of the id, never the id."""
        return fingerprint(obj.id)

    @admin.display(description="kind")
    def kind(self, obj: SessionRecord) -> str:
        """Tell a revocation marker (``auth``) from a session, without reading the data."""
        return "revocation marker" if obj.id.startswith("tkrv_") else "session"

    @admin.display(description="expires", ordering="expires_at")
    def expires(self, obj: SessionRecord) -> datetime:
        """Return the expiry as an aware datetime."""
        return datetime.fromtimestamp(obj.expires_at / 1000, UTC)

    @admin.display(description="live", boolean=True)
    def live(self, obj: SessionRecord) -> bool:
        """Tell whether the session has not expired yet."""
        return obj.expires_at > time.time() * 1000

    @admin.display(description="data size (bytes)")
    def size(self, obj: SessionRecord) -> int:
        """Return the stored data's size, never the data."""
        return len(obj.data.encode("utf-8"))
