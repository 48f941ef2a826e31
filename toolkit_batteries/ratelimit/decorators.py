"""Rate-limit Django and DRF views: ``@ratelimit(key="ip")``.

::

    from toolkit_batteries.ratelimit.decorators import ratelimit

    @ratelimit(key="ip", instance="login")
    def login(request): ...

A refused request gets ``429`` with ``{"error": {"code": "resource_exhausted", ...}}`` and
an integer ``Retry-After`` of at least one second; the view does not run. Each decorated
view has its own buckets (the key is prefixed with ``group``, by default the view's
dotted name), so one client's budget on ``login`` is not spent on ``search``.

When the limiter cannot answer (its server is down) the request passes and a warning is
logged: limiting **fails open** by default, as in the original toolkit, so an outage of
the rate limiter does not take the site down with it (a configuration error is never
swallowed: it raises). ``fail_open=False`` answers ``503``
``unavailable`` instead, for routes where an unlimited burst is worse than an outage.

An ``async def`` view stays a coroutine function: the limiter (a blocking call, a network
round trip on ``kvserver``) runs in a worker thread through ``sync_to_async``, then the
view is awaited, so the decorator works on Django's async stack (ASGI) too.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import iscoroutinefunction, sync_to_async

from toolkit_batteries.core.errors import ServiceUnavailableError

from .base import RateLimiterClosedError
from .keys import KeyFunction, resolve_key

__all__ = ["RateLimitRule", "ratelimit"]

logger = logging.getLogger("toolkit.ratelimit")

V = TypeVar("V", bound=Callable[..., Any])


class RateLimitRule:
    """One limit applied to requests: which limiter, which key, what each request costs."""

    __slots__ = ("cost", "fail_open", "group", "instance", "key_function")

    def __init__(
        self,
        key: str | KeyFunction = "ip",
        instance: str = "default",
        *,
        group: str = "",
        cost: int = 1,
        fail_open: bool = True,
    ) -> None:
        self.key_function = resolve_key(key)
        self.instance = instance
        self.group = group
        self.cost = cost
        self.fail_open = fail_open

    def check(self, request: Any) -> Any | None:
        """Return a 429/503 response when ``request`` must not proceed, else ``None``."""
        from toolkit_batteries import services
        from toolkit_batteries.http import error_response

        key = self.key_function(request)
        if not key:
            return None
        try:
            decision = services.ratelimit(self.instance).allow(f"{self.group}:{key}", self.cost)
        except (ServiceUnavailableError, RateLimiterClosedError) as exc:
            if self.fail_open:
                logger.warning(
                    "ratelimit.%s: limiter unavailable, request allowed (fail open): %s",
                    self.instance,
                    exc,
                )
                return None
            return error_response(
                503,
                "unavailable",
                "rate limiter unavailable, retry later",
                headers={"Retry-After": "1"},
            )
        if decision.allowed:
            return None
        return error_response(
            429,
            "resource_exhausted",
            "rate limit exceeded, retry later",
            headers={"Retry-After": str(decision.retry_after_seconds)},
        )


def _request_of(args: tuple[Any, ...]) -> Any:
    """Find the request among a view's positional arguments (function or method view)."""
    for arg in args[:2]:
        if hasattr(arg, "META") and hasattr(arg, "method"):
            return arg
    raise TypeError("@ratelimit: the decorated view received no request")


def ratelimit(
    key: str | KeyFunction = "ip",
    instance: str = "default",
    *,
    group: str | None = None,
    cost: int = 1,
    fail_open: bool = True,
) -> Callable[[V], V]:
    """Limit a view with the ``ratelimit`` service ``instance``.

    ``key`` is ``"ip"`` (``REMOTE_ADDR``), ``"user"`` (the user's pk, else the address), a
    dotted path or a callable taking the request and returning a string; a ``None`` or
    empty key lets the request through unlimited. Works on function views, on methods of
    class-based views (``def post(self, request)``) and under DRF's ``@api_view``.
    """
    rule_args = (resolve_key(key), instance)  # fail at decoration time, not per request

    def decorator(view: V) -> V:
        name = group or f"{view.__module__}.{view.__qualname__}"
        rule = RateLimitRule(*rule_args, group=name, cost=cost, fail_open=fail_open)

        if iscoroutinefunction(view):

            @functools.wraps(view)
            async def awrapped(*args: Any, **kwargs: Any) -> Any:
                refused = await sync_to_async(rule.check)(_request_of(args))
                if refused is not None:
                    return refused
                return await view(*args, **kwargs)

            awrapped.ratelimit_rule = rule  # type: ignore[attr-defined]
            return awrapped  # type: ignore[return-value]

        @functools.wraps(view)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            refused = rule.check(_request_of(args))
            if refused is not None:
                return refused
            return view(*args, **kwargs)

        wrapped.ratelimit_rule = rule  # type: ignore[attr-defined]
        return wrapped  # type: ignore[return-value]

    return decorator
