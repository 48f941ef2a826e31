"""Signed webhook delivery with retries, directly over HTTP or through the queue.

``services.webhook()`` returns the configured adapter (``http`` by default, ``queue``);
both sign every attempt with HMAC-SHA256 over the timestamp and body (the header format
is in :mod:`.signing`) and record each delivery in ``toolkit_webhook_delivery``.
Receivers call :func:`verify` or decorate their view with :func:`webhook_receiver`.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Delivery TargetRefusedError Webhook WebhookError",
    receivers="webhook_receiver",
    signing=(
        "EVENT_HEADER ID_HEADER SIGNATURE_HEADER SignatureError TIMESTAMP_HEADER sign "
        "signature_header verify"
    ),
)
