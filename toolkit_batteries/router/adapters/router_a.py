"""``router_a``: the same URLconf under ASGI, on gunicorn's uvicorn workers.

The application is ``settings.ASGI_APPLICATION``, else ``<project>.asgi.application``
(the package of ``WSGI_APPLICATION``), as ``toolkit serve --asgi`` picks it. The workers
come with the ``asgi`` extra (``uvicorn-worker``); opening without it raises
``MissingExtraError``. Nothing imports uvicorn until gunicorn starts a worker.
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import Any

from toolkit_batteries.core.errors import MissingExtraError

from ..base import ASGI_WORKER, Router

__all__ = ["ASGIRouter"]


def workers_installed() -> bool:
    """Tell whether the uvicorn workers can be imported (without importing them)."""
    return find_spec("uvicorn_worker") is not None


class ASGIRouter(Router):
    """The ASGI application, on gunicorn's uvicorn workers."""

    adapter_name = "router_a"
    protocol = "asgi"
    worker_class = ASGI_WORKER

    @classmethod
    def require(cls) -> None:
        """Refuse to open without the ``asgi`` extra."""
        if not workers_installed():
            raise MissingExtraError("router", "router_a", "asgi", "uvicorn-worker")

    def application_path(self) -> str | None:
        """Return ``settings.ASGI_APPLICATION``, else ``<project>.asgi.application``."""
        from django.conf import settings

        configured = getattr(settings, "ASGI_APPLICATION", None)
        if configured:
            return str(configured)
        wsgi = str(getattr(settings, "WSGI_APPLICATION", "") or "")
        return f"{wsgi.split('.')[0]}.asgi.application" if wsgi else None

    def _named_in_settings(self) -> bool:
        from django.conf import settings

        return bool(getattr(settings, "ASGI_APPLICATION", None))

    def _django_application(self) -> Any:
        from django.core.asgi import get_asgi_application

        return get_asgi_application()
