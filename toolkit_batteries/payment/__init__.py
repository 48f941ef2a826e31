"""The ``payment`` battery: payments and refunds through a provider, and its webhooks.

Get the configured service from the registry (``services.payment()``) or a container
(``container.payment()``); pick ``stub`` (the default: no provider, no funds, webhooks
unverified), ``payment_a`` (alias ``stripe``) or ``payment_b`` (alias ``paddle``) in
settings. Payments are rows of :mod:`.models`, moved only along the state machine of
:mod:`.states`; webhooks arrive through the DRF views of :mod:`.views`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "IdempotencyKeyReusedError": "base",
    "IllegalTransitionError": "states",
    "InvalidPaymentError": "base",
    "OperationInProgressError": "base",
    "Payment": "base",
    "PaymentError": "base",
    "PaymentNotFoundError": "base",
    "PaymentNotSupportedError": "base",
    "PaymentProviderError": "base",
    "PaymentState": "states",
    "WebhookEvent": "base",
    "WebhookPayloadError": "base",
    "WebhookSignatureError": "signatures",
    "WebhookTooLargeError": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
