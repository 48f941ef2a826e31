"""The ``billing`` battery: customers, subscriptions, invoices and provider webhooks.

``services.billing()`` returns the configured adapter: ``stub`` (the default: no provider,
no funds, no webhook verification), ``billing_a`` (alias ``stripe``) or ``billing_b``
(alias ``paddle``). Subscriptions move through one state machine (:mod:`.states`) and are
recorded in the ``toolkit_billing_subscription`` table; :mod:`.views` has a DRF webhook
view per provider. Imports no provider SDK.
"""

from __future__ import annotations

from .base import (
    Applied,
    Billing,
    BillingError,
    Customer,
    IdempotencyConflictError,
    IdempotencyMismatchError,
    Invoice,
    ProviderError,
    Subscription,
    SubscriptionNotFoundError,
    WebhookEvent,
    WebhookSignatureError,
    WebhookTooLargeError,
)
from .states import IllegalTransitionError, SubscriptionStatus

__all__ = [
    "Applied",
    "Billing",
    "BillingError",
    "Customer",
    "IdempotencyConflictError",
    "IdempotencyMismatchError",
    "IllegalTransitionError",
    "Invoice",
    "ProviderError",
    "Subscription",
    "SubscriptionNotFoundError",
    "SubscriptionStatus",
    "WebhookEvent",
    "WebhookSignatureError",
    "WebhookTooLargeError",
]
