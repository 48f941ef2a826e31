"""Read ``Authorization: Bearer <token>`` and verify it (shared by DRF and plain views).

RFC 6750: the scheme matches case-insensitively; the credential is one ``b64token`` with
no whitespace. Every refusal is logged on ``toolkit.auth`` at INFO with its reason and
never the token; callers answer one generic ``401`` whatever the reason was.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from .base import AuthError, Claims

__all__ = ["MISSING", "BearerRefused", "authenticate_authorization", "bearer_token", "log_refusal"]

logger = logging.getLogger("toolkit.auth")

#: RFC 6750 ``b64token``.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")

#: Returned by :func:`bearer_token` when the request carries no bearer credential.
MISSING = None


class BearerRefused(Exception):
    """A bearer credential was present but refused; ``reason`` is for logs only."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def bearer_token(header: str | bytes | None) -> str | None:
    """Return the token of a ``Bearer`` header; ``None`` when absent or another scheme.

    Raises :class:`BearerRefused` for ``Bearer`` with no token, several parts, or
    characters a bearer token cannot hold.
    """
    if not header:
        return MISSING
    if isinstance(header, bytes):
        try:
            header = header.decode("ascii")
        except UnicodeDecodeError:
            raise BearerRefused("authorization header is not ASCII") from None
    parts = header.split()
    if not parts or parts[0].lower() != "bearer":
        return MISSING
    if len(parts) != 2 or _B64TOKEN.fullmatch(parts[1]) is None:
        raise BearerRefused("malformed bearer credential")
    return parts[1]


def authenticate_authorization(
    header: str | bytes | None, instance: str = "default", where: Any = ""
) -> Claims | None:
    """Verify the bearer credential of an ``Authorization`` header value.

    Returns ``None`` when there is no bearer credential, the claims when it verifies, and
    raises :class:`BearerRefused` (after an INFO log line with the reason, never the
    token) when it is malformed or ``services.auth(instance)`` refuses it. Errors that
    are not refusals (a store outage) propagate and answer 500: the request fails closed.
    """
    from toolkit_batteries import services

    try:
        token = bearer_token(header)
    except BearerRefused as refused:
        log_refusal("BearerRefused", refused.reason, where)
        raise
    if token is None:
        return None
    try:
        return services.auth(instance).verify(token)
    except AuthError as exc:
        log_refusal(type(exc).__name__, str(exc), where)
        raise BearerRefused(str(exc)) from None


def log_refusal(kind: str, reason: str, where: Any = "") -> None:
    """Log why a credential was refused (never the credential)."""
    suffix = f" on {where}" if where else ""
    logger.info("bearer credential refused%s: %s (%s)", suffix, kind, reason)
