"""The payment battery's webhook signature names: the shared scheme, signing and error.

The scheme, signing and the constant-time check live in
:mod:`toolkit_batteries.core.webhook_signatures` (the billing battery's providers sign
the same way); :func:`toolkit_batteries.payment.webhooks.verify_webhook` checks a
delivery with it, failing with :class:`WebhookSignatureError` for the payment instance.
"""

from __future__ import annotations

from toolkit_batteries.core.webhook_signatures import MAX_HEADER_BYTES, Scheme, sign

from .errors import WebhookSignatureError

__all__ = ["MAX_HEADER_BYTES", "Scheme", "WebhookSignatureError", "sign"]
