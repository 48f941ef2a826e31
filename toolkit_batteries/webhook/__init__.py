"""Signed webhook delivery with retries, directly over HTTP or through the queue.

``services.webhook()`` returns the configured adapter (``http`` by default, ``queue``);
both sign every attempt with HMAC-SHA256 over the timestamp and body (the header format
is in :mod:`.signing`) and record each delivery in ``toolkit_webhook_delivery``.
Receivers call :func:`verify` or decorate their view with :func:`webhook_receiver`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Delivery, TargetRefusedError, Webhook, WebhookError
    from .receivers import webhook_receiver
    from .signing import (
        EVENT_HEADER,
        ID_HEADER,
        SIGNATURE_HEADER,
        TIMESTAMP_HEADER,
        SignatureError,
        sign,
        signature_header,
        verify,
    )

__all__ = [
    "EVENT_HEADER",
    "ID_HEADER",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "Delivery",
    "SignatureError",
    "TargetRefusedError",
    "Webhook",
    "WebhookError",
    "sign",
    "signature_header",
    "verify",
    "webhook_receiver",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Delivery": "base",
    "EVENT_HEADER": "signing",
    "ID_HEADER": "signing",
    "SIGNATURE_HEADER": "signing",
    "SignatureError": "signing",
    "TIMESTAMP_HEADER": "signing",
    "TargetRefusedError": "base",
    "Webhook": "base",
    "WebhookError": "base",
    "sign": "signing",
    "signature_header": "signing",
    "verify": "signing",
    "webhook_receiver": "receivers",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
