"""The outbox's tables, as Django models (``manage.py migrate`` creates them).

* :class:`OutboxMessage` (``toolkit_outbox_message``): one row per published message.
  ``status`` is ``pending`` (waiting for the relay, or claimed by one until
  ``locked_until``), ``sent`` (published; kept for ``retention``, then purged) or
  ``dead`` (``max_attempts`` failed publishes: the dead list, listed and requeued by
  ``outbox_relay dlq``). One table, so a requeue is an ``UPDATE`` and the admin shows a
  message's whole life on one page.
* :class:`InboxMessage` (``toolkit_outbox_inbox``): one row per (consumer, message id)
  a consumer has processed; its primary uniqueness is what deduplicates a redelivery.

Times are float seconds since the epoch by the outbox's clock, so every query compares
with a parameter (never the server's ``now()``): both dialects behave the same and tests
move time instead of sleeping. The admin shows them as dates.
"""

from __future__ import annotations

import uuid

from django.db import models

from toolkit_batteries.core.tables import table_meta

__all__ = ["DEAD", "PENDING", "SENT", "InboxMessage", "OutboxMessage"]

PENDING = "pending"
SENT = "sent"
DEAD = "dead"


class OutboxMessage(models.Model):
    """A message published inside a business transaction, relayed after it commits."""

    STATUSES = ((PENDING, "pending"), (SENT, "sent"), (DEAD, "dead"))

    id = models.BigAutoField(primary_key=True)
    message_id = models.UUIDField(default=uuid.uuid4, unique=True, help_text="the consumer's id")
    topic = models.CharField(max_length=200)
    key = models.CharField(max_length=200, blank=True, default="", help_text="partition key")
    payload = models.BinaryField()
    headers = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=8, choices=STATUSES, default=PENDING)
    attempts = models.IntegerField(default=0, help_text="publish attempts so far")
    created_at = models.FloatField(help_text="publish time, seconds since the epoch")
    available_at = models.FloatField(help_text="next attempt not before (backoff)")
    locked_until = models.FloatField(default=0, help_text="a relay's claim holds it until")
    locked_by = models.CharField(max_length=64, blank=True, default="")
    sent_at = models.FloatField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")

    Meta = table_meta(
        "toolkit_outbox_message",
        "outbox message",
        indexes=[
            # Rows by status, then backoff (the dead list, requeue, status counts).
            models.Index(fields=["status", "available_at", "id"], name="toolkit_outbox_ready"),
            # The claim: pending rows only, in the claim's ORDER BY id. Sent rows stay for
            # ``retention``; a claim walking the primary key stepped over every one of them
            # (24,006 buffers read for an empty claim after 20,000 sends). This index holds
            # the pending rows alone, so a claim reads O(batch) entries however many were sent.
            models.Index(
                fields=["id"], name="toolkit_outbox_pending", condition=models.Q(status=PENDING)
            ),
            # Retention purge of sent rows.
            models.Index(fields=["status", "sent_at"], name="toolkit_outbox_sent"),
        ],
    )

    def __repr__(self) -> str:
        # Never the payload: it may hold personal data.
        return f"<OutboxMessage {self.pk} topic={self.topic!r} status={self.status}>"

    def __str__(self) -> str:
        return f"{self.topic} #{self.pk} ({self.status})"


class InboxMessage(models.Model):
    """A message a consumer has processed: the row that makes a redelivery a no-op."""

    id = models.BigAutoField(primary_key=True)
    consumer = models.CharField(max_length=200)
    message_id = models.CharField(max_length=200)
    received_at = models.FloatField(help_text="processed at, seconds since the epoch")

    Meta = table_meta(
        "toolkit_outbox_inbox",
        "inbox message",
        unique={"toolkit_outbox_inbox_once": ("consumer", "message_id")},
        indexes=[models.Index(fields=["received_at"], name="toolkit_outbox_inbox_age")],
    )

    def __str__(self) -> str:
        return f"{self.consumer}: {self.message_id}"
