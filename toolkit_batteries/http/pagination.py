"""Cursor pagination shared by generated list endpoints (DESIGN.md, "HTTP conventions").

Cursors are opaque to clients: URL-safe base64 of a small JSON object the handler chose
(typically the sort key of the last item returned), so a handler can page by
``(created_at, id) > cursor`` and stay stable under inserts.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .errors import ApiError

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "Page", "decode_cursor", "encode_cursor", "parse_limit"]

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
_MAX_CURSOR_CHARS = 2048

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a list: the items and the cursor of the next page (None at the end)."""

    items: Sequence[T]
    next_cursor: str | None = None


def encode_cursor(value: dict[str, Any]) -> str:
    """Return the opaque cursor for ``value`` (a JSON-serialisable dict)."""
    raw = json.dumps(value, separators=(",", ":"), sort_keys=True, default=str).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_cursor(cursor: str) -> dict[str, Any]:
    """Return the dict inside ``cursor``; a malformed cursor is a 400 on field ``cursor``."""
    if len(cursor) > _MAX_CURSOR_CHARS:
        raise _bad_cursor()
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error):
        raise _bad_cursor() from None
    if not isinstance(value, dict):
        raise _bad_cursor()
    return value


#: A ``limit`` as text: ASCII digits only.
_LIMIT_TEXT = re.compile(r"[0-9]{1,4}")


def parse_limit(raw: str | int | None) -> int:
    """Return the page size: default 50, at most 200; anything else is a 400 on ``limit``.

    Only an absent ``limit`` takes the default: an empty value, signs, spaces or non-ASCII
    digits (which ``int()`` would take) are refused, as the documented ``integer`` says.
    """
    if raw is None:
        return DEFAULT_LIMIT
    if isinstance(raw, str) and not _LIMIT_TEXT.fullmatch(raw):
        limit = 0
    else:
        try:
            limit = int(raw)
        except (TypeError, ValueError):
            limit = 0
    if not 1 <= limit <= MAX_LIMIT:
        raise ApiError(
            400,
            "invalid_argument",
            "invalid parameter limit",
            {"limit": [f"must be an integer between 1 and {MAX_LIMIT}"]},
        )
    return limit


def _bad_cursor() -> ApiError:
    return ApiError(400, "invalid_argument", "invalid parameter cursor", {"cursor": ["invalid"]})
