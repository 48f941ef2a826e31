"""Rate-limit whole URL prefixes with one middleware.

::

    MIDDLEWARE = [..., "toolkit_batteries.ratelimit.middleware.RateLimitMiddleware"]
    TOOLKIT_RATELIMIT_RULES = [
        {"prefix": "/v1/auth/", "instance": "login", "key": "ip", "methods": ["POST"]},
        {"prefix": "/api/", "key": "user"},
    ]

Each rule takes ``prefix`` (required), ``key`` (``"ip"``, ``"user"`` or a dotted path to
a function of the request; default ``"ip"``), ``instance`` (default ``"default"``),
``cost`` (1), ``methods`` (all when absent) and ``fail_open`` (true). The longest
matching prefix wins and a request is charged to one rule only; each rule has its own
buckets (keys are prefixed with the rule's prefix). Refusals are the decorator's: 429
``resource_exhausted`` with an integer ``Retry-After`` >= 1. Rules are read when Django
builds the middleware, strictly (an unknown key fails with a "did you mean"), by the
decoder of every setting beside ``TOOLKIT``; the ``TOOLKIT_RATELIMIT_RULES`` variable
(a JSON list) replaces them. Subclasses may set :attr:`RateLimitMiddleware.rules` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse

from toolkit_batteries.core.options import option, options_class
from toolkit_batteries.core.sidesettings import SideSetting, read_side_setting

from .decorators import RateLimitRule

__all__ = ["SETTING", "RateLimitMiddleware"]

#: The Django setting holding the rules.
SETTING = "TOOLKIT_RATELIMIT_RULES"


@options_class
class RuleOptions:
    """One rule of ``TOOLKIT_RATELIMIT_RULES``."""

    prefix: str = option("", doc="URL path prefix (required)")
    key: str = option("ip", doc='"ip", "user" or a dotted path to a function of the request')
    instance: str = option("default", doc="ratelimit service instance")
    cost: int = option(1, doc="tokens one request takes")
    methods: tuple[str, ...] = option([], doc="HTTP methods (all when empty)")
    fail_open: bool = option(True, doc="let requests through when the limiter fails")


#: Its declaration for the decoder of settings beside ``TOOLKIT`` (env: the whole list, JSON).
RULES = SideSetting(
    SETTING, tuple[RuleOptions, ...], default=(), required=("prefix",), doc="URL prefix rules"
)


class RateLimitMiddleware:
    """Apply the first (longest) matching prefix rule to each request."""

    #: Rules used instead of the setting when a subclass defines them.
    rules: ClassVar[Sequence[Mapping[str, Any]] | None] = None
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self._async = iscoroutinefunction(get_response)
        if self._async:
            markcoroutinefunction(self)
        if self.rules is not None:  # rules in code are not a setting: no env overlay
            decoded = read_side_setting(RULES, list(self.rules), {})
        else:
            decoded = read_side_setting(RULES, getattr(settings, SETTING, None))
        self._rules = sorted(
            (self._build(i, rule) for i, rule in enumerate(decoded)),
            key=lambda item: len(item[0]),
            reverse=True,
        )

    @staticmethod
    def _build(index: int, rule: RuleOptions) -> tuple[str, frozenset[str] | None, RateLimitRule]:
        allowed = frozenset(m.upper() for m in rule.methods) if rule.methods else None
        try:
            built = RateLimitRule(
                rule.key,
                rule.instance,
                group=rule.prefix,
                cost=rule.cost,
                fail_open=rule.fail_open,
            )
        except ValueError as exc:
            raise ImproperlyConfigured(f"{SETTING}[{index}]: {exc}") from None
        return rule.prefix, allowed, built

    def __call__(self, request: HttpRequest) -> Any:
        """Refuse the request when its rule's bucket is empty; else pass it on."""
        if self._async:
            return self.__acall__(request)
        rule = self._rule_for(request)
        refused = None if rule is None else rule.check(request)
        if refused is not None:
            return refused
        return self.get_response(request)

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        """Do what :meth:`__call__` does on the async stack (the limiter in a thread)."""
        rule = self._rule_for(request)
        refused = None if rule is None else await sync_to_async(rule.check)(request)
        if refused is not None:
            return refused
        return await self.get_response(request)

    def _rule_for(self, request: HttpRequest) -> RateLimitRule | None:
        """Return the rule of the longest matching prefix, if its methods match."""
        path = request.path
        for prefix, methods, rule in self._rules:
            if path.startswith(prefix):
                return rule if methods is None or request.method in methods else None
        return None
