"""Render :class:`ApiError` and uncaught exceptions in the shared JSON shape."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse

from .errors import ApiError, error_response

__all__ = ["JsonErrorMiddleware"]

logger = logging.getLogger("toolkit.http")


class JsonErrorMiddleware:
    """Turn exceptions escaping a view into JSON error responses.

    ``ApiError`` becomes its own response; ``RequestDataTooBig`` (Django's
    ``DATA_UPLOAD_MAX_MEMORY_SIZE``) becomes 413; anything else is logged with its
    traceback and answered 500 ``internal`` with no detail, so internals never reach a
    client. ``Http404`` and ``PermissionDenied`` keep Django's own handling unless the
    request path starts with one of ``JSON_PREFIXES`` (``/api/`` and ``/v`` by default).
    """

    JSON_PREFIXES: tuple[str, ...] = ("/api/", "/v")

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        """Pass the request through; errors are handled in ``process_exception``."""
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        """Return the JSON response for ``exc``, or None to let Django handle it."""
        from django.core.exceptions import PermissionDenied
        from django.http import Http404

        if isinstance(exc, ApiError):
            return exc.response()
        if isinstance(exc, RequestDataTooBig):
            return error_response(413, "payload_too_large", "request body too large")
        if not request.path.startswith(self.JSON_PREFIXES):
            return None
        if isinstance(exc, Http404):
            return error_response(404, "not_found", "not found")
        if isinstance(exc, PermissionDenied):
            return error_response(403, "permission_denied", "permission denied")
        logger.exception("unhandled error on %s %s", request.method, request.path)
        return error_response(500, "internal", "internal error")
