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
builds the middleware; subclasses may set :attr:`RateLimitMiddleware.rules` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse

from .decorators import RateLimitRule

__all__ = ["SETTING", "RateLimitMiddleware"]

#: The Django setting holding the rules.
SETTING = "TOOLKIT_RATELIMIT_RULES"

_RULE_KEYS = frozenset({"prefix", "key", "instance", "cost", "methods", "fail_open"})


class RateLimitMiddleware:
    """Apply the first (longest) matching prefix rule to each request."""

    #: Rules used instead of the setting when a subclass defines them.
    rules: ClassVar[Sequence[Mapping[str, Any]] | None] = None

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        raw = self.rules if self.rules is not None else getattr(settings, SETTING, ())
        self._rules = sorted(
            (self._build(i, rule) for i, rule in enumerate(raw)),
            key=lambda item: len(item[0]),
            reverse=True,
        )

    @staticmethod
    def _build(
        index: int, rule: Mapping[str, Any]
    ) -> tuple[str, frozenset[str] | None, RateLimitRule]:
        where = f"{SETTING}[{index}]"
        if not isinstance(rule, Mapping) or not isinstance(rule.get("prefix"), str):
            raise ImproperlyConfigured(f'{where}: each rule needs a "prefix" string')
        unknown = sorted(set(rule) - _RULE_KEYS)
        if unknown:
            raise ImproperlyConfigured(f"{where}: unknown keys {', '.join(unknown)}")
        methods = rule.get("methods")
        allowed = frozenset(m.upper() for m in methods) if methods else None
        try:
            built = RateLimitRule(
                rule.get("key", "ip"),
                rule.get("instance", "default"),
                group=rule["prefix"],
                cost=int(rule.get("cost", 1)),
                fail_open=bool(rule.get("fail_open", True)),
            )
        except ValueError as exc:
            raise ImproperlyConfigured(f"{where}: {exc}") from None
        return rule["prefix"], allowed, built

    def __call__(self, request: HttpRequest) -> HttpResponse:
        """Refuse the request when its rule's bucket is empty; else pass it on."""
        path = request.path
        for prefix, methods, rule in self._rules:
            if path.startswith(prefix):
                if methods is None or request.method in methods:
                    refused = rule.check(request)
                    if refused is not None:
                        return refused
                break
        return self.get_response(request)
