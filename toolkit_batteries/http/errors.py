"""The error type and response shape of every toolkit endpoint."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, JsonResponse

__all__ = [
    "INVALID_CREDENTIALS_MESSAGE",
    "MAX_BODY_BYTES",
    "STATUS_CODES",
    "ApiError",
    "error_response",
    "read_json",
]

#: Request bodies above this many bytes answer 413 (DESIGN.md: 1 MiB).
MAX_BODY_BYTES = 1_048_576

#: The code each status carries when the raiser does not name one.
STATUS_CODES: Mapping[int, str] = {
    400: "invalid_argument",
    401: "unauthenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    409: "already_exists",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "resource_exhausted",
    500: "internal",
    501: "unimplemented",
    503: "unavailable",
}

#: One message for every credential failure, so a response never tells an attacker
#: whether the token was missing, malformed, expired or revoked.
UNAUTHENTICATED_MESSAGE = "authentication required"
#: The only other 401 message: a failed login, which never says which half was wrong.
INVALID_CREDENTIALS_MESSAGE = "invalid credentials"
_FIXED_401_MESSAGES = frozenset({UNAUTHENTICATED_MESSAGE, INVALID_CREDENTIALS_MESSAGE})


class ApiError(Exception):
    """An error a view answers with; raise it anywhere below a view.

    ``fields`` maps request field names to their problems (400 only, by convention).
    ``headers`` adds response headers (``Retry-After`` on 429); a 401 always carries
    ``WWW-Authenticate: Bearer``.
    """

    def __init__(
        self,
        status: int,
        code: str | None = None,
        message: str = "",
        fields: Mapping[str, Sequence[str]] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.status = status
        self.code = code or STATUS_CODES.get(status, "error")
        self.message = message or self.code.replace("_", " ")
        self.fields = {k: [str(m) for m in v] for k, v in (fields or {}).items()}
        self.headers = dict(headers or {})
        super().__init__(f"{status} {self.code}: {self.message}")

    def response(self) -> JsonResponse:
        """Render this error as a JSON response."""
        return error_response(self.status, self.code, self.message, self.fields, self.headers)


def error_response(
    status: int,
    code: str | None = None,
    message: str = "",
    fields: Mapping[str, Sequence[str]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JsonResponse:
    """Return ``{"error": {"code", "message", "fields"?}}`` with ``status``.

    A 401 always gets ``WWW-Authenticate: Bearer`` and one of two fixed messages
    (``authentication required``, or ``invalid credentials`` for a failed login), whatever
    else the caller passed, so no path can leak why a credential was refused.
    """
    code = code or STATUS_CODES.get(status, "error")
    if status == 401 and message not in _FIXED_401_MESSAGES:
        message = UNAUTHENTICATED_MESSAGE
    body: dict[str, Any] = {"code": code, "message": message or code.replace("_", " ")}
    if fields:
        body["fields"] = {k: [str(m) for m in v] for k, v in fields.items()}
    response = JsonResponse({"error": body}, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    if status == 401:
        response["WWW-Authenticate"] = "Bearer"
    return response


#: How deeply a request body may nest arrays and objects. Real payloads stay under ten
#: levels; the bound keeps serializers and handlers (which recurse) far from the stack limit.
MAX_JSON_DEPTH = 64
_TOO_DEEP = f"JSON body nested deeper than {MAX_JSON_DEPTH} levels"


def _deeper_than(value: Any, limit: int) -> bool:
    """Return True when ``value`` nests lists/dicts more than ``limit`` levels (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def read_json(request: HttpRequest, max_bytes: int = MAX_BODY_BYTES) -> dict[str, Any]:
    """Return the request's JSON object body, or raise a 400/413 :class:`ApiError`.

    The size is checked against ``Content-Length`` before reading, and again on the bytes
    read, so a lying header cannot push past the cap.
    """
    declared = request.META.get("CONTENT_LENGTH") or "0"
    try:
        declared_size = int(declared)
    except ValueError:
        raise ApiError(400, "invalid_argument", "invalid Content-Length header") from None
    if declared_size > max_bytes:
        raise ApiError(413, "payload_too_large", f"request body over {max_bytes} bytes")
    try:
        raw = request.body
    except RequestDataTooBig:
        raise ApiError(413, "payload_too_large", "request body too large") from None
    if len(raw) > max_bytes:
        raise ApiError(413, "payload_too_large", f"request body over {max_bytes} bytes")
    try:
        data = json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "invalid_argument", "invalid JSON body") from None
    except RecursionError:  # nesting deep enough to exhaust the decoder's recursion
        raise ApiError(400, "invalid_argument", _TOO_DEEP) from None
    # Each level opens with a "{" or "[" byte in any of JSON's encodings, so a body with
    # few of them cannot nest too deep: the walk is only needed past that many.
    if raw.count(b"{") + raw.count(b"[") > MAX_JSON_DEPTH and _deeper_than(data, MAX_JSON_DEPTH):
        raise ApiError(400, "invalid_argument", _TOO_DEEP)
    if not isinstance(data, dict):
        raise ApiError(400, "invalid_argument", "request body must be a JSON object")
    return data
