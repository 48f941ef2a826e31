"""The signature format of webhook deliveries, and :func:`verify` for receivers.

Every delivery carries four headers (the layout of Stripe's and Standard Webhooks'
schemes, with our own header names)::

    Webhook-Id: 6f1c2e0a9b3d4c5e8f7a6b5c4d3e2f10      (the delivery id, the same on retries)
    Webhook-Event: order.paid                          (the event name given to send())
    Webhook-Timestamp: 1767225600                      (Unix seconds when this attempt was signed)
    Webhook-Signature: v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd

The signed content is the timestamp's decimal digits, one ``.`` and the raw body bytes::

    signed = f"{timestamp}.".encode("ascii") + body
    v1 = hmac.new(secret_bytes, signed, hashlib.sha256).hexdigest()   # lower-case hex

A text secret is used as its UTF-8 bytes. While a secret rotates the sender signs with
each of its secrets and lists the signatures space-separated (``v1=<hex> v1=<hex>``);
a receiver accepts the delivery when any listed ``v1`` signature matches any of its own
secrets. Unknown schemes (``v2=...``) are ignored, so the format can grow.

:func:`verify` refuses a timestamp further than ``tolerance`` (five minutes, the
``replay_tolerance`` option) from the receiver's clock, in either direction, and
compares signatures with :func:`hmac.compare_digest` (constant time). Every attempt is
signed afresh, so a retry an hour later still verifies; a captured request replayed
after the window does not. Within the window, deduplicate on ``Webhook-Id``.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from toolkit_batteries.core.errors import ToolkitError
from toolkit_batteries.core.webhook_signatures import header_value

__all__ = [
    "EVENT_HEADER",
    "ID_HEADER",
    "SCHEME",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "SignatureError",
    "secret_list",
    "sign",
    "signature_header",
    "verify",
]

ID_HEADER = "Webhook-Id"
EVENT_HEADER = "Webhook-Event"
TIMESTAMP_HEADER = "Webhook-Timestamp"
SIGNATURE_HEADER = "Webhook-Signature"
#: The signature scheme this module writes and reads.
SCHEME = "v1"
#: The default ``tolerance`` of :func:`verify`, in seconds (the spec's ``replay_tolerance``).
DEFAULT_TOLERANCE = 300.0
#: Longest signature header :func:`verify` reads (a bound on work per request).
MAX_SIGNATURE_HEADER = 4096

Secret = str | bytes
Secrets = Secret | Iterable[Secret]


class SignatureError(ToolkitError, ValueError):
    """A delivery failed verification; ``reason`` says which check (never a value)."""

    code = "webhook_signature_invalid"

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"webhook: signature verification failed: {reason}")


def secret_list(secret: Secrets) -> list[bytes]:
    """Return the secrets as bytes (one secret, or several while rotating); refuse empties."""
    items = [secret] if isinstance(secret, (str, bytes, bytearray)) else list(secret)
    found: list[bytes] = []
    for item in items:
        if isinstance(item, str):
            item = item.encode("utf-8")
        if not isinstance(item, (bytes, bytearray)):
            raise TypeError("a webhook secret must be str or bytes (or a list of them)")
        if not item:
            raise ValueError("a webhook secret must not be empty")
        found.append(bytes(item))
    if not found:
        raise ValueError("at least one webhook secret is required")
    return found


def sign(body: bytes, secret: Secret, timestamp: int) -> str:
    """Return the lower-case hex HMAC-SHA256 of ``f"{timestamp}." + body`` under ``secret``."""
    key = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    signed = str(int(timestamp)).encode("ascii") + b"." + body
    return hmac.new(key, signed, hashlib.sha256).hexdigest()


def signature_header(body: bytes, secrets: Secrets, timestamp: int) -> str:
    """Return the ``Webhook-Signature`` value: ``v1=<hex>`` per secret, space-separated."""
    return " ".join(f"{SCHEME}={sign(body, key, timestamp)}" for key in secret_list(secrets))


def verify(
    headers: Mapping[str, Any] | Any,
    body: bytes,
    secret: Secrets,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    now: Callable[[], float] = time.time,
) -> int:
    """Check a received delivery; return its signed timestamp or raise :class:`SignatureError`.

    ``headers`` is any mapping of the request's headers (names matched ignoring case),
    ``body`` the raw request body, exactly as received (``request.body``; never a
    re-serialised JSON). ``secret`` is one secret or several (rotation): any match
    passes. ``tolerance`` (seconds or a ``timedelta``) bounds the drift between the
    timestamp and ``now()`` in both directions.
    """
    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise TypeError("body must be the raw request bytes")
    raw = bytes(body)
    keys = secret_list(secret)
    window = tolerance.total_seconds() if hasattr(tolerance, "total_seconds") else float(tolerance)
    stamp_text = header_value(headers, TIMESTAMP_HEADER)
    if stamp_text is None:
        raise SignatureError(f"the {TIMESTAMP_HEADER} header is missing")
    stamp_text = stamp_text.strip()
    if not stamp_text.isascii() or not stamp_text.isdigit() or len(stamp_text) > 12:
        raise SignatureError(f"the {TIMESTAMP_HEADER} header is not Unix seconds")
    stamp = int(stamp_text)
    if abs(now() - stamp) > window:
        raise SignatureError("the timestamp is outside the replay tolerance")
    header = header_value(headers, SIGNATURE_HEADER)
    if header is None:
        raise SignatureError(f"the {SIGNATURE_HEADER} header is missing")
    if len(header) > MAX_SIGNATURE_HEADER:
        raise SignatureError(f"the {SIGNATURE_HEADER} header is too long")
    offered = [
        value.encode("ascii", "replace")
        for scheme, sep, value in (part.partition("=") for part in header.split())
        if sep and scheme == SCHEME
    ]
    if not offered:
        raise SignatureError(f"the {SIGNATURE_HEADER} header has no {SCHEME} signature")
    matched = False
    for key in keys:
        expected = sign(raw, key, stamp).encode("ascii")
        for candidate in offered:
            # Every pair is compared, so the time taken does not tell which one matched.
            matched |= hmac.compare_digest(expected, candidate)
    if not matched:
        raise SignatureError("no signature matches")
    return stamp
