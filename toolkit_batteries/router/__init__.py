"""The ``router`` battery: the project's URLconf, served under WSGI or ASGI.

``stdhttp`` (the default) serves ``settings.WSGI_APPLICATION`` on gunicorn; ``router_a``
serves the same URLconf as the ASGI application on gunicorn's uvicorn workers, and
``toolkit serve`` picks it without ``--asgi``. Importing this package imports no server.
"""

from __future__ import annotations

from .base import ASGI_WORKER, Router
from .serving import serves_asgi

__all__ = ["ASGI_WORKER", "Router", "serves_asgi"]
