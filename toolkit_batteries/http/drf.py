"""DRF's ``EXCEPTION_HANDLER`` in the toolkit error shape.

Set ``REST_FRAMEWORK = {"EXCEPTION_HANDLER": "toolkit_batteries.http.drf.exception_handler"}``.
Every DRF error (validation, parse, authentication, permission, throttling, 404, 405, 415)
and :class:`~toolkit_batteries.http.ApiError` answer ``{"error": {...}}``; anything else is
logged and answered 500 ``internal`` with no detail.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response

from .errors import STATUS_CODES, UNAUTHENTICATED_MESSAGE, ApiError

__all__ = ["exception_handler"]

logger = logging.getLogger("toolkit.http")


def exception_handler(exc: Exception, context: Mapping[str, Any]) -> Response | None:
    """Return the toolkit-shaped response for ``exc``."""
    if isinstance(exc, ApiError):
        return _response(exc.status, exc.code, exc.message, exc.fields, exc.headers)
    if isinstance(exc, RequestDataTooBig):
        return _response(413, "payload_too_large", "request body too large")
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    if isinstance(exc, NotImplementedError):
        return _response(501, "unimplemented", "not implemented")
    if not isinstance(exc, exceptions.APIException):
        view = context.get("view")
        logger.exception("unhandled error in %s", type(view).__name__ if view else "view")
        return _response(500, "internal", "internal error")

    status = exc.status_code
    headers: dict[str, str] = {}
    if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        headers["Retry-After"] = str(max(1, math.ceil(exc.wait)))
    if isinstance(exc, exceptions.ParseError):
        return _response(400, "invalid_argument", "invalid JSON body")
    if isinstance(exc, exceptions.ValidationError):
        fields = _fields(exc.detail)
        return _response(400, "invalid_argument", "invalid request", fields)
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        # DRF downgrades these to 403 when the view has no authentication class that
        # can name a scheme; keep its decision, but never its detail.
        if status == 401:
            return _response(401, "unauthenticated", UNAUTHENTICATED_MESSAGE)
        return _response(403, "permission_denied", "permission denied")
    return _response(status, STATUS_CODES.get(status, "error"), _message(exc.detail), None, headers)


def _fields(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """Flatten DRF's nested validation detail into ``{"a.b": [messages]}``."""
    if isinstance(detail, Mapping):
        out: dict[str, list[str]] = {}
        for key, value in detail.items():
            out.update(_fields(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(detail, list):
        if all(not isinstance(d, Mapping | list) for d in detail):
            return {prefix or "non_field_errors": [str(d) for d in detail]}
        out = {}
        for i, item in enumerate(detail):
            out.update(_fields(item, f"{prefix}.{i}" if prefix else str(i)))
        return out
    return {prefix or "non_field_errors": [str(detail)]}


def _message(detail: Any) -> str:
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list) and detail:
        return str(detail[0])
    return "request failed"


def _response(
    status: int,
    code: str,
    message: str,
    fields: Mapping[str, list[str]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    body: dict[str, Any] = {"code": code, "message": message}
    if fields:
        body["fields"] = dict(fields)
    response = Response({"error": body}, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    if status == 401:
        response["WWW-Authenticate"] = "Bearer"
    return response
