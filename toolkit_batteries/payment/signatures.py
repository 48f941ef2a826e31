"""The payment battery's webhook signature check: the shared one, with its own error.

The scheme, signing and the constant-time check live in
:mod:`toolkit_batteries.core.webhook_signatures` (the billing battery's providers sign
the same way); this module adds :class:`WebhookSignatureError`, naming the payment
instance.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from toolkit_batteries.core import webhook_signatures
from toolkit_batteries.core.webhook_signatures import MAX_HEADER_BYTES, Scheme, sign

from .errors import WebhookSignatureError

__all__ = ["MAX_HEADER_BYTES", "Scheme", "WebhookSignatureError", "sign", "verify"]


def verify(
    scheme: Scheme,
    header: str | None,
    body: bytes,
    secret: str,
    *,
    tolerance: float,
    now: Callable[[], float] = time.time,
    instance: str = "default",
) -> int:
    """:func:`toolkit_batteries.core.webhook_signatures.verify`, failing with
    :class:`WebhookSignatureError` for ``instance``."""
    return webhook_signatures.verify(
        scheme,
        header,
        body,
        secret,
        tolerance=tolerance,
        now=now,
        fail=lambda reason: WebhookSignatureError(instance, reason),
    )
