"""Checks on a JWT's header and claims shared by the ``jwt`` and ``oidc`` adapters.

The signature is pyjwt's business; everything around it is here, explicit and tested:
the header is read *before* any key is chosen (so ``alg`` and ``kid`` decide nothing
implicitly), and the time claims are judged against an injectable clock with the
configured leeway. Failures raise :class:`InvalidTokenError` / :class:`TokenExpiredError`
with a short reason meant for server logs; the token itself is never part of a message.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime
from typing import Any

from .base import Claims, InvalidTokenError, TokenExpiredError

__all__ = [
    "MAX_TOKEN_LENGTH",
    "build_claims",
    "check_audience",
    "check_times",
    "decode_payload",
    "expiry_of",
    "number",
    "read_header",
    "roles_of",
    "subject_of",
]

#: Longest token accepted (bytes of text); anything longer is refused before parsing.
MAX_TOKEN_LENGTH = 8192

#: Claims that become :class:`Claims` attributes instead of ``extra`` entries.
_OWN = frozenset({"sub", "roles", "exp", "jti"})

#: Parsed headers by their encoded segment: a service sees a handful of distinct headers
#: (one per kid), so most verifies skip the base64 and JSON work. Bounded: cleared when
#: full, so junk headers cost a re-parse, never memory.
_HEADER_CACHE: dict[str, dict[str, Any]] = {}
_HEADER_CACHE_SIZE = 256


def read_header(token: Any) -> dict[str, Any]:
    """Return the JOSE header of a compact JWS, refusing anything odd (treat it as read-only).

    Refused: a non-string, an empty or over-long token, not exactly three segments, a
    header that is not base64url JSON of an object, a ``crit`` header (no extension is
    understood here) and ``b64: false`` (unencoded payloads).
    """
    if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LENGTH:
        raise InvalidTokenError("malformed token")
    if token.count(".") != 2:
        raise InvalidTokenError("malformed token")
    segment = token[: token.index(".")]
    header = _HEADER_CACHE.get(segment)
    if header is not None:
        return header
    try:
        raw = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
        header = json.loads(raw)
    except (binascii.Error, ValueError):
        raise InvalidTokenError("malformed token header") from None
    if not isinstance(header, dict):
        raise InvalidTokenError("malformed token header")
    if "crit" in header or header.get("b64", True) is not True:
        raise InvalidTokenError("unsupported token header")
    if len(_HEADER_CACHE) >= _HEADER_CACHE_SIZE:
        _HEADER_CACHE.clear()
    _HEADER_CACHE[segment] = header
    return header


def number(payload: dict[str, Any], name: str) -> float | None:
    """Return the numeric claim ``name`` (``None`` when absent); refuse non-numbers."""
    value = payload.get(name)
    if value is None and name not in payload:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidTokenError(f"{name} is not a number")
    return float(value)


def decode_payload(jws: Any, token: str, key: Any, algorithm: str) -> dict[str, Any]:
    """Check a compact JWS's signature with ``key`` and return its payload, a JSON object.

    Both adapters verify signatures through pyjwt's JWS layer and judge the claims
    themselves (this module), so the refusals are worded once, here: "signature mismatch"
    or "malformed token", never the token or the library's message.
    """
    try:
        payload = json.loads(jws.decode(token, key, algorithms=[algorithm]))
    except Exception as exc:
        import jwt as pyjwt  # only on a refusal: the adapters imported it already

        if isinstance(exc, pyjwt.InvalidSignatureError):
            raise InvalidTokenError("signature mismatch") from None
        if isinstance(exc, pyjwt.PyJWTError | ValueError):
            raise InvalidTokenError("malformed token") from None
        raise
    if not isinstance(payload, dict):
        raise InvalidTokenError("malformed token")
    return payload


def expiry_of(payload: dict[str, Any]) -> float:
    """Return the ``exp`` of a token being revoked, whose other time claims are not judged.

    A token without a numeric ``exp`` cannot say how long its revocation must be kept.
    """
    exp = payload.get("exp")
    if isinstance(exp, bool) or not isinstance(exp, int | float):
        raise InvalidTokenError("missing exp")
    return float(exp)


def check_times(payload: dict[str, Any], now: float, leeway: float) -> float:
    """Check ``exp`` (required), ``nbf`` and ``iat``; return ``exp``.

    A token is expired once ``exp <= now - leeway`` and not yet valid while
    ``nbf > now + leeway``.
    """
    exp = number(payload, "exp")
    if exp is None:
        raise InvalidTokenError("missing exp")
    nbf = number(payload, "nbf")
    number(payload, "iat")
    if exp <= now - leeway:
        raise TokenExpiredError("token expired")
    if nbf is not None and nbf > now + leeway:
        raise InvalidTokenError("token not valid yet (nbf)")
    return exp


def check_audience(payload: dict[str, Any], audience: str) -> None:
    """Require ``aud`` to be ``audience`` or a list of strings that contains it."""
    aud = payload.get("aud")
    if isinstance(aud, str):
        ok = aud == audience
    elif isinstance(aud, list) and all(isinstance(a, str) for a in aud):
        ok = audience in aud
    else:
        ok = False
    if not ok:
        raise InvalidTokenError("wrong audience")


def subject_of(payload: dict[str, Any]) -> str:
    """Return the non-empty string ``sub``; an empty subject never authenticates."""
    subject = payload.get("sub")
    if not isinstance(subject, str) or not subject:
        raise InvalidTokenError("missing subject")
    return subject


def roles_of(payload: dict[str, Any]) -> tuple[str, ...]:
    """Return the ``roles`` claim as a tuple; refuse anything but a list of strings."""
    roles = payload.get("roles")
    if roles is None:
        return ()
    if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
        raise InvalidTokenError("roles is not a list of strings")
    return tuple(roles)


def build_claims(payload: dict[str, Any], exp: float, token_id: str) -> Claims:
    """Return the :class:`Claims` of a checked payload."""
    return Claims(
        subject=subject_of(payload),
        roles=roles_of(payload),
        expires_at=datetime.fromtimestamp(exp, UTC),
        token_id=token_id,
        extra={k: v for k, v in payload.items() if k not in _OWN},
    )
