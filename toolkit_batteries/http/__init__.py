"""The HTTP conventions every toolkit endpoint shares (DESIGN.md, "HTTP conventions").

Generated views, the reference application and battery decorators (rate limits,
idempotency, bearer auth) all answer errors in one shape::

    {"error": {"code": "invalid_argument", "message": "...", "fields": {"email": ["..."]}}}

Raise :class:`ApiError` from any view; :class:`~.middleware.JsonErrorMiddleware` (plain
Django) and :func:`~.drf.exception_handler` (DRF) render it. Nothing here imports DRF, so
plain Django projects pay nothing for it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .errors import STATUS_CODES, ApiError, error_response, read_json

__all__ = ["STATUS_CODES", "ApiError", "error_response", "read_json"]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "ApiError": "errors",
    "STATUS_CODES": "errors",
    "error_response": "errors",
    "read_json": "errors",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
