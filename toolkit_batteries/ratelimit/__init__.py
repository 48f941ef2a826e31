"""Token-bucket rate limiting, in memory or on a key-value server.

::

    from toolkit_batteries import services

    decision = services.ratelimit().allow(f"login:{email}")
    if not decision.allowed:
        ...  # wait decision.retry_after seconds

Views: :func:`toolkit_batteries.ratelimit.decorators.ratelimit`, the
:class:`~toolkit_batteries.ratelimit.middleware.RateLimitMiddleware` for URL prefixes and
the DRF :class:`~toolkit_batteries.ratelimit.drf.RateLimitThrottle`. Adapters:
``memory`` (default, per process) and ``kvserver`` (shared, one Lua script per decision).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Decision, Limits, RateLimiter, RateLimiterClosedError

__all__ = ["Decision", "Limits", "RateLimiter", "RateLimiterClosedError"]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Decision": "base",
    "Limits": "base",
    "RateLimiter": "base",
    "RateLimiterClosedError": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
