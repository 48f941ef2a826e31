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

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Decision Limits RateLimiter RateLimiterClosedError",
)
