"""The HTTP conventions every toolkit endpoint shares (DESIGN.md, "HTTP conventions").

Generated views, the reference application and battery decorators (rate limits,
idempotency, bearer auth) all answer errors in one shape::

    {"error": {"code": "invalid_argument", "message": "...", "fields": {"email": ["..."]}}}

Raise :class:`ApiError` from any view; :class:`~.middleware.JsonErrorMiddleware` (plain
Django) and :func:`~.drf.exception_handler` (DRF) render it. Nothing here imports DRF, so
plain Django projects pay nothing for it.
"""

from __future__ import annotations

from .errors import STATUS_CODES, ApiError, error_response, read_json

__all__ = ["STATUS_CODES", "ApiError", "error_response", "read_json"]
