"""The signature format of webhook deliveries, and :func:`verify` for receivers.

Deliveries follow the Standard Webhooks layout (https://www.standardwebhooks.com/), so
receivers written for that standard (its ``standardwebhooks`` libraries) verify them,
plus one signature that also covers the event name::

    Webhook-Id: 6f1c2e0a9b3d4c5e8f7a6b5c4d3e2f10      (the delivery id, the same on retries)
    Webhook-Event: order.paid                          (the event name given to send())
    Webhook-Timestamp: 1767225600                      (Unix seconds when this attempt was signed)
    Webhook-Signature: v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v1e,2Zr0b...=

Each signature is the base64 (standard alphabet, padded) HMAC-SHA256 under the secret::

    v1  = HMAC(key, f"{id}.{timestamp}.".encode() + body)                  # Standard Webhooks
    v1e = HMAC(key, f"{id}.{timestamp}.{event}\n".encode() + body)        # also binds the event

The event name can hold no line break, so the ``\n`` ends it unambiguously. The key is
the secret's UTF-8 bytes, except that a secret written as the standard's ``whsec_``
followed by valid base64 is that base64's bytes (the standard's convention, so one
``whsec_...`` string configures both sides). While a secret rotates the sender signs with
each secret and lists every signature, space-separated; a receiver accepts the delivery
when a listed signature matches one of its secrets. Unknown versions are ignored.

:func:`verify` requires a matching ``v1e`` whenever the delivery has a ``Webhook-Event``
header or a ``v1e`` signature, so a captured delivery with its ``Webhook-Id`` or
``Webhook-Event`` rewritten fails; a delivery from another Standard Webhooks sender (no
event header, ``v1`` only) verifies on ``v1``. It refuses a timestamp further than
``tolerance`` (five minutes, the ``replay_tolerance`` option) from the receiver's clock,
in either direction, and compares with :func:`hmac.compare_digest`. Every attempt is
signed afresh, so a retry an hour later still verifies; a captured request replayed
after the window does not. Within the window, deduplicate on ``Webhook-Id``.

The layout before this one (``Webhook-Signature: v1=<hex>`` over ``f"{timestamp}." +
body``, no id, no event) is accepted only with ``verify(..., legacy=True)``, for
receivers whose senders have not been upgraded yet.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from toolkit_batteries.core.webhook_signatures import header_value

from .errors import SignatureError

__all__ = [
    "EVENT_HEADER",
    "EVENT_SCHEME",
    "ID_HEADER",
    "SCHEME",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "SignatureError",
    "keys_signature_header",
    "secret_list",
    "sign",
    "signature_header",
    "verify",
]

ID_HEADER = "Webhook-Id"
EVENT_HEADER = "Webhook-Event"
TIMESTAMP_HEADER = "Webhook-Timestamp"
SIGNATURE_HEADER = "Webhook-Signature"
#: The Standard Webhooks signature version: over ``id.timestamp.body``.
SCHEME = "v1"
#: This toolkit's signature version that also covers the event name.
EVENT_SCHEME = "v1e"
#: Internal name of the pre-Standard layout (``v1=<hex>`` over ``timestamp.body``).
LEGACY_SCHEME = "legacy"
#: The Standard Webhooks prefix of a base64 secret.
STANDARD_PREFIX = "whsec_"
#: The default ``tolerance`` of :func:`verify`, in seconds (the spec's ``replay_tolerance``).
DEFAULT_TOLERANCE = 300.0
#: Longest signature header :func:`verify` reads (a bound on work per request).
MAX_SIGNATURE_HEADER = 4096

Secret = str | bytes
Secrets = Secret | Iterable[Secret]


def secret_list(secret: Secrets) -> list[bytes]:
    """Return the HMAC keys of the secrets (one, or several while rotating); refuse empties.

    A text secret is its UTF-8 bytes, or the decoded base64 of a ``whsec_<base64>`` one.
    """
    items = [secret] if isinstance(secret, (str, bytes, bytearray)) else list(secret)
    found: list[bytes] = []
    for item in items:
        if isinstance(item, str):
            item = _key(item)
        if not isinstance(item, (bytes, bytearray)):
            raise TypeError("a webhook secret must be str or bytes (or a list of them)")
        if not item:
            raise ValueError("a webhook secret must not be empty")
        found.append(bytes(item))
    if not found:
        raise ValueError("at least one webhook secret is required")
    return found


def _key(secret: Secret) -> bytes:
    """Return the HMAC key of a secret: ``whsec_<base64>`` decoded, else the UTF-8 bytes."""
    if isinstance(secret, str):
        if secret.startswith(STANDARD_PREFIX):
            encoded = secret[len(STANDARD_PREFIX) :]
            try:
                key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
            except (binascii.Error, ValueError):
                key = b""
            if key:
                return key
        return secret.encode("utf-8")
    return bytes(secret)


def _mac(key: bytes, signed: bytes) -> str:
    return base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode("ascii")


def _standard_content(delivery_id: str, timestamp: int, body: bytes) -> bytes:
    return f"{delivery_id}.{int(timestamp)}.".encode() + body


def _event_content(delivery_id: str, timestamp: int, event: str, body: bytes) -> bytes:
    return f"{delivery_id}.{int(timestamp)}.{event}\n".encode() + body


def sign(
    body: bytes, secret: Secret, timestamp: int, *, delivery_id: str, event: str | None = None
) -> str:
    """Return one base64 signature: ``v1`` (``event`` None) or ``v1e`` (with ``event``)."""
    (key,) = secret_list(secret)
    if event is None:
        return _mac(key, _standard_content(delivery_id, timestamp, body))
    return _mac(key, _event_content(delivery_id, timestamp, event, body))


def signature_header(
    body: bytes, secrets: Secrets, timestamp: int, *, delivery_id: str, event: str
) -> str:
    """Return the ``Webhook-Signature`` value: ``v1,<b64> v1e,<b64>`` per secret."""
    return keys_signature_header(
        body, secret_list(secrets), timestamp, delivery_id=delivery_id, event=event
    )


def keys_signature_header(
    body: bytes, keys: list[bytes], timestamp: int, *, delivery_id: str, event: str
) -> str:
    """:func:`signature_header` for keys :func:`secret_list` returned already.

    A sender parses its secrets once per ``send``, not again on every attempt.
    """
    parts: list[str] = []
    standard = _standard_content(delivery_id, timestamp, body)
    bound = _event_content(delivery_id, timestamp, event, body)
    for key in keys:
        parts.append(f"{SCHEME},{_mac(key, standard)}")
        parts.append(f"{EVENT_SCHEME},{_mac(key, bound)}")
    return " ".join(parts)


def verify(
    headers: Mapping[str, Any] | Any,
    body: bytes,
    secret: Secrets,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    now: Callable[[], float] = time.time,
    legacy: bool = False,
) -> int:
    """Check a received delivery; return its signed timestamp or raise :class:`SignatureError`.

    ``headers`` is any mapping of the request's headers (names matched ignoring case),
    ``body`` the raw request body, exactly as received (``request.body``; never a
    re-serialised JSON). ``secret`` is one secret or several (rotation): any match
    passes. ``tolerance`` (seconds or a ``timedelta``) bounds the drift between the
    timestamp and ``now()`` in both directions. ``legacy`` also accepts the previous
    layout (``v1=<hex>`` over ``timestamp.body``), which binds neither id nor event.
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
    offered: dict[str, list[bytes]] = {SCHEME: [], EVENT_SCHEME: [], LEGACY_SCHEME: []}
    for part in header.split():
        version, comma, value = part.partition(",")
        if comma and version in offered:
            offered[version].append(value.encode("ascii", "replace"))
        elif legacy:
            version, equals, value = part.partition("=")
            if equals and version == SCHEME:
                offered[LEGACY_SCHEME].append(value.encode("ascii", "replace"))
    event = header_value(headers, EVENT_HEADER)
    delivery_id = header_value(headers, ID_HEADER)
    candidates: list[tuple[list[bytes], Callable[[bytes], bytes]]] = []
    if delivery_id is not None and (event is not None or offered[EVENT_SCHEME]):
        if event is None:
            raise SignatureError(f"the {EVENT_HEADER} header is missing")
        content = _event_content(delivery_id, stamp, event, raw)
        candidates.append((offered[EVENT_SCHEME], lambda key: _mac(key, content).encode()))
    elif delivery_id is not None:
        content = _standard_content(delivery_id, stamp, raw)
        candidates.append((offered[SCHEME], lambda key: _mac(key, content).encode()))
    if legacy:
        old = str(stamp).encode("ascii") + b"." + raw
        candidates.append(
            (
                offered[LEGACY_SCHEME],
                lambda key: hmac.new(key, old, hashlib.sha256).hexdigest().encode(),
            )
        )
    if not any(found for found, _ in candidates):
        if delivery_id is None and not legacy:
            raise SignatureError(f"the {ID_HEADER} header is missing")
        wanted = EVENT_SCHEME if event is not None else SCHEME
        raise SignatureError(f"the {SIGNATURE_HEADER} header has no {wanted} signature")
    matched = False
    for key in keys:
        for found, expected_of in candidates:
            expected = expected_of(key)
            for candidate in found:
                # Every pair is compared, so the time taken does not tell which one matched.
                matched |= hmac.compare_digest(expected, candidate)
    if not matched:
        raise SignatureError("no signature matches")
    return stamp
