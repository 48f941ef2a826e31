"""Signed webhook delivery with retries, directly over HTTP or through the queue.

``services.webhook()`` returns the configured adapter (``http`` by default, ``queue``);
both sign every attempt with HMAC-SHA256 over the timestamp and body (the header format
is in :mod:`.signing`) and record each delivery in ``toolkit_webhook_delivery``.
Receivers call :func:`verify` or decorate their view with :func:`webhook_receiver`.
"""

from __future__ import annotations

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
