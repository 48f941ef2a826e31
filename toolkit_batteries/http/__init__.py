"""The HTTP conventions every toolkit endpoint shares (DESIGN.md, "HTTP conventions").

Generated views, the reference application and battery decorators (rate limits,
idempotency, bearer auth) all answer errors in one shape::

    {"error": {"code": "invalid_argument", "message": "...", "fields": {"email": ["..."]}}}

Raise :class:`ApiError` from any view; :class:`~.middleware.JsonErrorMiddleware` (plain
Django) and :func:`~.drf.exception_handler` (DRF) render it. Nothing here imports DRF, so
plain Django projects pay nothing for it.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    errors="ApiError STATUS_CODES error_response read_json",
)
