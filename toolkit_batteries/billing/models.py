"""The subscriptions the billing battery has seen, as a Django model.

One row per subscription of one billing instance: ``(instance, provider_id)`` is unique.
Every write goes through the state machine (:mod:`.states`) in
:meth:`~toolkit_batteries.billing.base.Billing.record`, under a row lock, so two webhooks
for one subscription cannot interleave. Times are Unix seconds by the application's clock
(``last_event_at`` is the provider's event time, which orders webhooks that arrive out of
order). No secret is stored: provider ids and statuses only.
"""

from __future__ import annotations

from django.db import models

from toolkit_batteries.core.tables import table_meta

from .states import SubscriptionStatus

__all__ = ["BillingSubscription"]


class BillingSubscription(models.Model):
    """One subscription at a provider (or the stub)."""

    instance = models.CharField(max_length=64, help_text="the billing instance (TOOLKIT name)")
    adapter = models.CharField(max_length=32)
    provider_id = models.CharField(max_length=255, help_text="the provider's subscription id")
    reference = models.CharField(
        max_length=255, blank=True, help_text="what created it first (a checkout transaction)"
    )
    customer_id = models.CharField(max_length=255, db_index=True)
    price_id = models.CharField(max_length=255, blank=True)
    status = models.CharField(
        max_length=24, choices=[(s.value, s.value.replace("_", " ")) for s in SubscriptionStatus]
    )
    current_period_end = models.FloatField(null=True, blank=True, help_text="Unix seconds")
    cancel_at_period_end = models.BooleanField(default=False)
    last_event_at = models.FloatField(default=0.0, help_text="newest applied event, Unix seconds")
    created_at = models.FloatField(help_text="Unix seconds")
    updated_at = models.FloatField(help_text="Unix seconds")

    Meta = table_meta(
        "toolkit_billing_subscription",
        "billing subscription",
        unique={"toolkit_billing_subscription_id": ("instance", "provider_id")},
    )

    def __repr__(self) -> str:
        return f"<BillingSubscription {self.instance}:{self.provider_id} {self.status}>"

    def __str__(self) -> str:
        return f"{self.instance}: {self.provider_id}"
