"""Timestamped HMAC-SHA256 webhook signatures of payment providers, verified in constant time.

The payment and billing batteries' providers sign ``<timestamp><separator><raw body>``
with HMAC-SHA256 under the endpoint's secret and send the timestamp and hex digest in one
header:

=======================  ===================================  ===============  ===========
adapters                 header                               pairs            signed text
=======================  ===================================  ===============  ===========
``*_a`` (:data:`STRIPE`) ``Stripe-Signature: t=..,v1=..``     ``,``-separated  ``t.body``
``*_b`` (:data:`PADDLE`) ``Paddle-Signature: ts=..;h1=..``    ``;``-separated  ``ts:body``
=======================  ===================================  ===============  ===========

:func:`verify` is written once for both (and any other provider of that shape), rather
than through each SDK's helper, because the SDK helpers read the wall clock (no
injectable clock for tests), and the second one skips the time check whenever the
environment holds ``TEST_MODE``. Several signatures in one header (a secret being
rolled) are all tried; every comparison is :func:`hmac.compare_digest`.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_HEADER_BYTES", "PADDLE", "STRIPE", "Scheme", "header_value", "sign", "verify"]

#: Longest signature header read (a bound on the work an attacker can ask for).
MAX_HEADER_BYTES = 4096


@dataclass(frozen=True)
class Scheme:
    """One provider's signature header layout."""

    #: The header name (``Stripe-Signature``).
    header: str
    #: The key of the timestamp pair (``t``).
    timestamp_key: str
    #: The key of each signature pair (``v1``).
    signature_key: str
    #: Separator between pairs (``,``).
    pair_separator: str
    #: What joins the timestamp and the body in the signed text (``.``).
    joiner: bytes

    def signed_text(self, timestamp: int, body: bytes) -> bytes:
        """Return the bytes the provider signs for ``timestamp`` and ``body``."""
        return str(int(timestamp)).encode("ascii") + self.joiner + body


#: ``t=<unix>,v1=<hex>`` over ``<t>.<body>``.
STRIPE = Scheme("Stripe-Signature", "t", "v1", ",", b".")
#: ``ts=<unix>;h1=<hex>`` over ``<ts>:<body>``.
PADDLE = Scheme("Paddle-Signature", "ts", "h1", ";", b":")


def sign(scheme: Scheme, secret: str, timestamp: int, body: bytes) -> str:
    """Return the header value a provider would send (used by benches and examples)."""
    digest = hmac.new(secret.encode(), scheme.signed_text(timestamp, body), hashlib.sha256)
    return (
        f"{scheme.timestamp_key}={int(timestamp)}{scheme.pair_separator}"
        f"{scheme.signature_key}={digest.hexdigest()}"
    )


def verify(
    scheme: Scheme,
    header: str | None,
    body: bytes,
    secret: str,
    *,
    tolerance: float,
    fail: Callable[[str], Exception],
    now: Callable[[], float] = time.time,
) -> int:
    """Check ``header`` against ``body``; return the signed timestamp or raise.

    ``body`` is the raw request body exactly as received. ``tolerance`` (seconds) bounds
    the drift between the signed timestamp and ``now()`` in both directions, so a
    captured request cannot be replayed later. A failed check raises ``fail(reason)``:
    the battery's own error, whose message says which check failed, never a value.
    """

    if not secret:
        raise fail("no webhook_secret is configured")
    if not header:
        raise fail(f"the {scheme.header} header is missing")
    if len(header) > MAX_HEADER_BYTES:
        raise fail(f"the {scheme.header} header is too long")
    stamp_text = ""
    candidates: list[str] = []
    for pair in header.split(scheme.pair_separator):
        key, sep, value = pair.strip().partition("=")
        if not sep:
            continue
        if key == scheme.timestamp_key:
            stamp_text = value.strip()
        elif key == scheme.signature_key:
            candidates.append(value.strip())
    if not (stamp_text.isascii() and stamp_text.isdigit() and len(stamp_text) <= 12):
        raise fail(f"the {scheme.header} header has no Unix timestamp")
    if not candidates:
        raise fail(f"the {scheme.header} header has no {scheme.signature_key} signature")
    stamp = int(stamp_text)
    if abs(now() - stamp) > tolerance:
        raise fail("the timestamp is outside the tolerance")
    expected = hmac.new(secret.encode(), scheme.signed_text(stamp, body), hashlib.sha256)
    wanted = expected.hexdigest().encode("ascii")
    matched = False
    for candidate in candidates:
        # Every candidate is compared (no early exit), each in constant time.
        matched |= hmac.compare_digest(wanted, candidate.encode("utf-8", "replace"))
    if not matched:
        raise fail("no signature matches")
    return stamp


def header_value(headers: Any, name: str) -> str | None:
    """Read ``name`` from Django's ``request.headers`` or any mapping, ignoring case."""
    getter = getattr(headers, "get", None)
    if getter is not None:
        value = getter(name)
        if value is not None:
            return str(value)
    if isinstance(headers, Mapping):
        wanted = name.lower()
        for key, value in headers.items():
            if str(key).lower() == wanted:
                return str(value)
    return None
