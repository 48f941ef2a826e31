"""The ``router`` battery: the project's URLconf, served under WSGI or ASGI.

``stdhttp`` (the default) serves ``settings.WSGI_APPLICATION`` on gunicorn; ``router_a``
serves the same URLconf as the ASGI application on gunicorn's uvicorn workers, and
``toolkit serve`` picks it without ``--asgi``. Importing this package imports no server.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import ASGI_WORKER, Router
    from .serving import serves_asgi

__all__ = ["ASGI_WORKER", "Router", "serves_asgi"]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "ASGI_WORKER": "base",
    "Router": "base",
    "serves_asgi": "serving",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
