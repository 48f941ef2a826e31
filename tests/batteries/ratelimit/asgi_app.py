"""The ASGI application uvicorn serves in the async tests."""

from __future__ import annotations

import os

# The test passes the settings module explicitly (pytest exports the suite's own).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.batteries.ratelimit.asgi_settings")

from django.core.asgi import get_asgi_application

application = get_asgi_application()
