"""The ``db`` queue adapter's tables, as Django models (``manage.py migrate`` creates them).

Two tables, so the hot path (push, claim, ack) only ever touches live messages:

* :class:`Message` (``toolkit_queue_message``): one row per message waiting or in
  flight. ``visible_at`` is when it may be delivered (push + delay, or the end of the
  current delivery's lease while ``leased``); ``attempts`` counts deliveries and also
  identifies the current one, so a late acknowledgement from an expired delivery
  matches no row.
* :class:`DeadLetter` (``toolkit_queue_dead_letter``): messages moved to their topic's
  dead list, with the reason and when. A dead letter keeps its message's id, and a
  requeue moves it back under the same id.

Times are float seconds since the epoch by the queue's clock (``queue.clock``), so every
query compares with a parameter, never with the server's ``now()``: both dialects behave
the same, and tests move time instead of sleeping. The admin (:mod:`.admin`) shows them
as dates.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import models

from toolkit_batteries.core.tables import table_meta

__all__ = ["DeadLetter", "Message", "epoch_to_datetime"]


def epoch_to_datetime(epoch: float | None) -> datetime | None:
    """Return an aware UTC datetime for an epoch timestamp (``None`` stays ``None``)."""
    return None if epoch is None else datetime.fromtimestamp(float(epoch), UTC)


class _Envelope(models.Model):
    """The columns a message keeps from push to dead list, declared once for both tables.

    A requeue copies them between the tables, so they must stay alike; the admin and
    ``repr`` show only these, never the body (it may hold personal data).
    """

    topic = models.CharField(max_length=200)
    body = models.BinaryField()
    attempts = models.IntegerField(default=0, help_text="deliveries so far")
    enqueued_at = models.FloatField(help_text="push time, seconds since the epoch")

    class Meta:
        abstract = True

    def __repr__(self) -> str:
        # Never the body: it may hold personal data.
        return f"<{type(self).__name__} {self.pk} topic={self.topic!r} attempts={self.attempts}>"


class Message(_Envelope):
    """A message waiting for delivery, or delivered and not yet settled (``leased``)."""

    id = models.BigAutoField(primary_key=True)
    visible_at = models.FloatField(help_text="deliverable from (push + delay, or lease end)")
    leased = models.BooleanField(default=False, help_text="a delivery holds it")

    Meta = table_meta(
        "toolkit_queue_message",
        "queue message",
        # The claim: next visible message of a topic, push order among equals.
        indexes=[models.Index(fields=["topic", "visible_at", "id"], name="toolkit_queue_ready")],
    )

    def __str__(self) -> str:
        return f"{self.topic} #{self.pk}"


class DeadLetter(_Envelope):
    """A message on its topic's dead list: given up on, kept for inspection or requeue."""

    id = models.BigIntegerField(primary_key=True, help_text="the message's id")
    attempts = models.IntegerField(default=0, help_text="deliveries before it died")
    died_at = models.FloatField(help_text="moved to the dead list, seconds since the epoch")
    reason = models.TextField(blank=True, default="")

    Meta = table_meta(
        "toolkit_queue_dead_letter",
        "dead letter",
        indexes=[models.Index(fields=["topic", "died_at", "id"], name="toolkit_queue_dead")],
    )

    def __str__(self) -> str:
        return f"{self.topic} #{self.pk} (dead)"
