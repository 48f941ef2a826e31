"""``stdhttp``: the URLconf under WSGI (``settings.WSGI_APPLICATION``) on gunicorn."""

from __future__ import annotations

from typing import Any

from ..base import Router

__all__ = ["StdHTTPRouter"]


class StdHTTPRouter(Router):
    """The WSGI application, on gunicorn's sync workers."""

    adapter_name = "stdhttp"
    protocol = "wsgi"
    worker_class = None

    def application_path(self) -> str | None:
        """Return ``settings.WSGI_APPLICATION``."""
        from django.conf import settings

        return getattr(settings, "WSGI_APPLICATION", None) or None

    def _named_in_settings(self) -> bool:
        return bool(self.application_path())

    def _django_application(self) -> Any:
        from django.core.wsgi import get_wsgi_application

        return get_wsgi_application()
