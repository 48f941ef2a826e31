"""The ``db`` idempotency adapter's table, as a Django model (``manage.py migrate`` creates it).

One row per live key of one store instance: ``(instance, key)`` is unique, which is what
makes a reservation atomic (``INSERT ... ON CONFLICT (instance, key)``). Keys written by
the ``Idempotency-Key`` view decorator and middleware read ``http:<scope hash>:<key>``
(:func:`split_http_key` takes them apart for the admin).

``created_at`` and ``expires_at`` are Unix seconds by the application's clock, so every
query compares with a parameter and never with the server's ``now()``: both dialects
behave the same and tests can inject a clock. The owner ``token`` lets its holder commit
or release, and ``response`` is a stored answer that may hold a caller's data, so the
admin (:mod:`.admin`) shows neither in full.
"""

from __future__ import annotations

from django.db import models

from toolkit_batteries.core.tables import table_meta

__all__ = ["HTTP_PREFIX", "IdempotencyRecord", "split_http_key"]

#: How keys stored by the HTTP layer begin: ``http:<scope hash>:<client key>``.
HTTP_PREFIX = "http:"


class IdempotencyRecord(models.Model):
    """One reserved or completed idempotency key."""

    class State(models.TextChoices):
        IN_PROGRESS = "in_progress", "in progress"
        COMPLETED = "completed", "completed"

    instance = models.CharField(max_length=64, help_text="the store instance (TOOLKIT name)")
    key = models.CharField(max_length=255)
    state = models.CharField(max_length=16, choices=State.choices)
    token = models.CharField(max_length=64, help_text="owner token of an in-progress key")
    fingerprint = models.TextField(blank=True, help_text="hash of the first request")
    response = models.BinaryField(null=True, help_text="the stored, encoded response")
    created_at = models.FloatField(help_text="Unix seconds")
    expires_at = models.FloatField(db_index=True, help_text="Unix seconds")

    Meta = table_meta(
        "toolkit_idempotency_record",
        "idempotency record",
        unique={"toolkit_idempotency_record_key": ("instance", "key")},
    )

    def __repr__(self) -> str:
        # The token lets its holder commit: never in a repr, a log line or a traceback.
        return f"<IdempotencyRecord {self.instance}:{self.key!r} {self.state}>"

    def __str__(self) -> str:
        return f"{self.instance}: {self.key}"


def split_http_key(key: str) -> tuple[str, str]:
    """Return ``(scope hash, client key)`` of an HTTP-layer key; ``("", key)`` otherwise."""
    if key.startswith(HTTP_PREFIX):
        scope, sep, rest = key[len(HTTP_PREFIX) :].partition(":")
        if sep:
            return scope, rest
    return "", key
