"""The ``billing`` battery: customers, subscriptions, invoices and provider webhooks.

``services.billing()`` returns the configured adapter: ``stub`` (the default: no provider,
no funds, no webhook verification), ``billing_a`` (alias ``stripe``) or ``billing_b``
(alias ``paddle``). Subscriptions move through one state machine (:mod:`.states`) and are
recorded in the ``toolkit_billing_subscription`` table; :mod:`.views` has a DRF webhook
view per provider. Imports no provider SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Applied": "base",
    "Billing": "base",
    "BillingError": "base",
    "Customer": "base",
    "IdempotencyConflictError": "base",
    "IdempotencyMismatchError": "base",
    "IllegalTransitionError": "states",
    "Invoice": "base",
    "ProviderError": "base",
    "Subscription": "base",
    "SubscriptionNotFoundError": "base",
    "SubscriptionStatus": "states",
    "WebhookEvent": "base",
    "WebhookSignatureError": "base",
    "WebhookTooLargeError": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
