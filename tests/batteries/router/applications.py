"""Applications named by settings in the router tests (marked, so a test can tell them)."""

from __future__ import annotations

from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application

wsgi_application = get_wsgi_application()
wsgi_application.marker = "named-wsgi"  # type: ignore[attr-defined]
asgi_application = get_asgi_application()
asgi_application.marker = "named-asgi"  # type: ignore[attr-defined]
