"""Settings of the ASGI server the async tests start (uvicorn, in a child process).

The suite's settings with an async URLconf, the rate-limit middleware on ``/mw/``, a
tight limiter and a resilience policy with a short timeout.
"""

from __future__ import annotations

from tests.settings import *  # noqa: F403

ROOT_URLCONF = "tests.batteries.ratelimit.asgi_views"
MIDDLEWARE = ["toolkit_batteries.ratelimit.middleware.RateLimitMiddleware"]
TOOLKIT_RATELIMIT_RULES = [{"prefix": "/mw/", "key": "ip"}]
TOOLKIT = {
    "ratelimit": {"adapter": "memory", "options": {"rate": 0.001, "burst": 2}},
    "resilience": {
        "default": {"adapter": "memory", "options": {"timeout": "5s"}},
        "fast": {"adapter": "memory", "options": {"timeout": "300ms"}},
    },
}
