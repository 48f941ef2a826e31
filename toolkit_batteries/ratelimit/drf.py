"""A DRF throttle backed by the ``ratelimit`` service.

::

    from toolkit_batteries.ratelimit.drf import RateLimitThrottle

    class LoginView(APIView):
        throttle_classes = [RateLimitThrottle]
        ratelimit_instance = "login"     # optional view attributes
        ratelimit_key = "ip"             # "ip", "user", a dotted path or a callable

DRF turns a refusal into ``Throttled``; the toolkit's exception handler answers 429
``resource_exhausted`` with ``Retry-After`` (whole seconds, at least 1). Buckets are per
view class. Like the decorator, the throttle lets requests through (and logs) when the
limiter's server is unreachable.
"""

from __future__ import annotations

import logging
from typing import Any

from toolkit_batteries.core.errors import ServiceUnavailableError

from .base import RateLimiterClosedError
from .keys import resolve_key

__all__ = ["RateLimitThrottle"]

logger = logging.getLogger("toolkit.ratelimit")


class RateLimitThrottle:
    """``allow_request`` asks the limiter; ``wait`` reports its ``retry_after``."""

    def __init__(self) -> None:
        self._wait: float | None = None

    def allow_request(self, request: Any, view: Any) -> bool:
        """Take one token (``ratelimit_cost`` on the view) for this request's key."""
        from toolkit_batteries import services

        instance = getattr(view, "ratelimit_instance", "default")
        key = resolve_key(getattr(view, "ratelimit_key", "ip"))(request)
        if not key:
            return True
        group = f"{type(view).__module__}.{type(view).__qualname__}"
        try:
            decision = services.ratelimit(instance).allow(
                f"{group}:{key}", getattr(view, "ratelimit_cost", 1)
            )
        except (ServiceUnavailableError, RateLimiterClosedError) as exc:
            logger.warning("ratelimit.%s: limiter unavailable, request allowed: %s", instance, exc)
            return True
        self._wait = None if decision.allowed else float(decision.retry_after_seconds)
        return decision.allowed

    def wait(self) -> float | None:
        """Return the seconds until the refused request could pass (at least 1)."""
        return self._wait
