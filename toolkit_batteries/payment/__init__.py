"""The ``payment`` battery: payments and refunds through a provider, and its webhooks.

Get the configured service from the registry (``services.payment()``) or a container
(``container.payment()``); pick ``stub`` (the default: no provider, no funds, webhooks
unverified), ``payment_a`` (alias ``stripe``) or ``payment_b`` (alias ``paddle``) in
settings. Payments are rows of :mod:`.models`, moved only along the state machine of
:mod:`.states`; webhooks arrive through the DRF views of :mod:`.views`.
"""

from __future__ import annotations

from .base import (
    IdempotencyKeyReusedError,
    InvalidPaymentError,
    OperationInProgressError,
    Payment,
    PaymentError,
    PaymentNotFoundError,
    PaymentNotSupportedError,
    PaymentProviderError,
    WebhookEvent,
    WebhookPayloadError,
    WebhookTooLargeError,
)
from .signatures import WebhookSignatureError
from .states import IllegalTransitionError, PaymentState

__all__ = [
    "IdempotencyKeyReusedError",
    "IllegalTransitionError",
    "InvalidPaymentError",
    "OperationInProgressError",
    "Payment",
    "PaymentError",
    "PaymentNotFoundError",
    "PaymentNotSupportedError",
    "PaymentProviderError",
    "PaymentState",
    "WebhookEvent",
    "WebhookPayloadError",
    "WebhookSignatureError",
    "WebhookTooLargeError",
]
