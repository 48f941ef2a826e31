"""The delivery log: one row per delivery (all its attempts), a Django model.

``manage.py migrate`` creates ``toolkit_webhook_delivery``; the adapters write it through
the ``db`` service's alias, so a ``send`` inside the caller's ``transaction.atomic()``
records (and, on the ``queue`` adapter with the ``db`` queue, enqueues) with the
caller's rows. The row holds what an operator needs to see (target, event, status,
attempts, last error, times) and never the secret, the signature or the body (it may
hold personal data): only its size.
"""

from __future__ import annotations

from django.db import models

__all__ = ["WebhookDelivery"]


class WebhookDelivery(models.Model):
    """One webhook delivery and the outcome of its latest attempt."""

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        SENDING = "sending", "sending"
        RETRYING = "retrying", "retrying"
        SUCCEEDED = "succeeded", "succeeded"
        FAILED = "failed", "failed"

    delivery_id = models.CharField(max_length=64, unique=True, help_text="the Webhook-Id header")
    instance = models.CharField(max_length=64, help_text="the webhook instance (TOOLKIT name)")
    adapter = models.CharField(max_length=16)
    target = models.CharField(max_length=2048)
    event = models.CharField(max_length=200, db_index=True)
    status = models.CharField(max_length=16, choices=Status.choices, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    response_status = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    body_size = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(db_index=True)
    updated_at = models.DateTimeField()
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "toolkit_webhook"
        db_table = "toolkit_webhook_delivery"
        verbose_name = "webhook delivery"
        verbose_name_plural = "webhook deliveries"

    def __repr__(self) -> str:
        return f"<WebhookDelivery {self.delivery_id} {self.event} {self.status} x{self.attempts}>"

    def __str__(self) -> str:
        return f"{self.event} ({self.delivery_id})"
