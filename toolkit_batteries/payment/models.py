"""Payments and refunds as Django models (``manage.py migrate`` creates the tables).

Every adapter, the ``stub`` included, records what it did here through the ``db``
service's alias, so a payment created inside the caller's ``transaction.atomic()``
commits or rolls back with the caller's rows. Rows hold amounts, states and the
provider's object ids, never a key, a webhook secret or a client secret.
"""

from __future__ import annotations

import uuid

from django.db import models

from toolkit_batteries.core.tables import table_meta

from .states import PaymentState

__all__ = ["PaymentRecord", "RefundRecord"]

_STATES = [(state.value, state.value) for state in PaymentState]


class PaymentRecord(models.Model):
    """One payment: amount in minor units (cents), currency, state, provider object id."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    instance = models.CharField(max_length=64, help_text="the payment instance (TOOLKIT name)")
    adapter = models.CharField(max_length=16)
    provider_id = models.CharField(
        max_length=255, db_index=True, help_text="the provider's payment object id"
    )
    amount = models.BigIntegerField(help_text="in the currency's minor unit (cents)")
    currency = models.CharField(max_length=3, help_text="ISO 4217, upper case")
    amount_refunded = models.BigIntegerField(default=0)
    state = models.CharField(max_length=24, choices=_STATES, db_index=True)
    provider_status = models.CharField(max_length=64, blank=True, default="")
    reference = models.CharField(
        max_length=255, blank=True, default="", db_index=True, help_text="the caller's reference"
    )
    description = models.CharField(max_length=1000, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    #: Non-secret provider details the adapter needs later (a line item id).
    provider_data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(db_index=True)
    updated_at = models.DateTimeField()

    Meta = table_meta(
        "toolkit_payment_payment",
        "payment",
        unique={"toolkit_payment_provider_id_uniq": ("adapter", "provider_id")},
    )

    @property
    def payment_state(self) -> PaymentState:
        """Return :attr:`state` as a :class:`PaymentState`."""
        return PaymentState(self.state)

    @property
    def refundable(self) -> int:
        """Return the amount that may still be refunded (0 unless money was taken)."""
        if self.state not in (PaymentState.SUCCEEDED, PaymentState.PARTIALLY_REFUNDED):
            return 0
        return max(self.amount - self.amount_refunded, 0)

    def __repr__(self) -> str:
        return f"<PaymentRecord {self.id} {self.amount} {self.currency} {self.state}>"

    def __str__(self) -> str:
        return f"{self.amount} {self.currency} ({self.state})"


class RefundRecord(models.Model):
    """One refund of a payment, made once per idempotency key."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        SUCCEEDED = "succeeded", "succeeded"
        FAILED = "failed", "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    payment = models.ForeignKey(PaymentRecord, on_delete=models.CASCADE, related_name="refunds")
    provider_id = models.CharField(max_length=255, db_index=True)
    amount = models.BigIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices)
    reason = models.CharField(max_length=500, blank=True, default="")
    #: SHA-256 of the caller's idempotency key (the key itself may carry an order number).
    key_hash = models.CharField(max_length=64, db_index=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    Meta = table_meta("toolkit_payment_refund", "refund")

    def __repr__(self) -> str:
        return f"<RefundRecord {self.id} {self.amount} {self.status}>"

    def __str__(self) -> str:
        return f"refund {self.amount} ({self.status})"
