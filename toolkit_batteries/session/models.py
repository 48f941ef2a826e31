"""The ``db`` session adapter's table, as a Django model (``manage.py migrate`` creates it).

One row per session. ``id`` is the session id, which is a bearer secret (the ``auth``
battery's ``session`` adapter hands it out as the token), and ``data`` may hold anything
the application stored: the admin shows neither (:mod:`.admin`).

``expires_at`` is milliseconds since the epoch by the application's clock, so every query
compares with a parameter and never with the server's ``now()``: both dialects behave the
same, and tests can inject a clock.
"""

from __future__ import annotations

from django.db import models

from toolkit_batteries.core.tables import table_meta

__all__ = ["SessionRecord"]


class SessionRecord(models.Model):
    """One server-side session (or an ``auth`` revocation marker, ``tkrv_`` ids)."""

    id = models.CharField(max_length=128, primary_key=True)
    data = models.TextField()
    expires_at = models.BigIntegerField(db_index=True, help_text="milliseconds since the epoch")
    #: The ``session`` instance the row belongs to: every query filters by it, so
    #: ``session.admin`` never reads, extends or deletes a row ``session.default`` wrote.
    instance = models.CharField(max_length=100, default="default")

    Meta = table_meta("toolkit_session_record", "session")

    def __repr__(self) -> str:
        # The id is a bearer secret: never in a repr, a log line or a traceback.
        return f"<SessionRecord expires_at={self.expires_at}>"

    def __str__(self) -> str:
        return f"session {fingerprint(self.id)}"


def fingerprint(session_id: str) -> str:
    """Return a short digest that tells sessions apart without revealing the id."""
    import hashlib

    return hashlib.sha256(session_id.encode()).hexdigest()[:12]
