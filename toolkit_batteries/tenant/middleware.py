"""Resolve each request's tenant: ``request.tenant`` and :func:`current_tenant`.

::

    MIDDLEWARE = [
        ...,
        "toolkit_batteries.tenant.middleware.TenantMiddleware",   # before the views
    ]

For each request the middleware asks the ``tenant`` service (``services.tenant()``, or
the instance named by :attr:`TenantMiddleware.instance`) for the id, sets
``request.tenant`` and makes it current (:func:`~toolkit_batteries.tenant.current_tenant`,
the cache ``KEY_FUNCTION``, :func:`~toolkit_batteries.tenant.tenant_prefix`) until the
response is returned. A request with no tenant, a malformed one or an unknown one is
answered ``400 invalid_argument`` in the toolkit's error shape
(``{"error": {"code": "invalid_argument", "message": "tenant unknown", "fields":
{"tenant": ["unknown"]}}}``); the id the client sent is never echoed.

Sync and async capable: under ASGI the chain stays async, and the tenant follows the
request into ``sync_to_async`` views (a context variable). Paths in
:attr:`TenantMiddleware.exempt_paths` (the health probes) are served without a tenant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponse

from toolkit_batteries.core.errors import http_status
from toolkit_batteries.http.errors import error_response

from .base import TenantError
from .context import _current

__all__ = ["TenantMiddleware"]


class TenantMiddleware:
    """Set ``request.tenant`` and the current tenant; refuse bad tenants with a 400."""

    #: The ``tenant`` service instance that resolves requests.
    instance: ClassVar[str] = "default"
    #: Paths served without a tenant (``request.tenant`` is ``None``): the probes.
    exempt_paths: ClassVar[frozenset[str]] = frozenset({"/healthz", "/readyz"})
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        """Keep the next handler; mark this middleware async when it is."""
        from toolkit_batteries import services

        self.get_response = get_response
        self._services = services
        self._async = iscoroutinefunction(get_response)
        if self._async:
            markcoroutinefunction(self)

    def _resolve(self, request: HttpRequest) -> str | None:
        if request.path_info in self.exempt_paths:
            return None
        return self._services.tenant(self.instance).resolve(request)

    @contextmanager
    def _tenant_of(self, request: HttpRequest) -> Iterator[HttpResponse | None]:
        """Yield the 400 refusal, or ``None`` with the tenant current until the exit.

        One body for the sync and the async path, which differ only in how they await.
        """
        try:
            tenant = self._resolve(request)
        except TenantError as exc:
            yield _refusal(exc)
            return
        request.tenant = tenant  # type: ignore[attr-defined]
        token = _current.set(tenant)
        try:
            yield None
        finally:
            _current.reset(token)

    def __call__(self, request: HttpRequest) -> Any:
        """Resolve the tenant, then run the rest of the chain with it current."""
        if self._async:
            return self.__acall__(request)
        with self._tenant_of(request) as refusal:
            return refusal if refusal is not None else self.get_response(request)

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        """Do what :meth:`__call__` does on the async stack (resolution reads no I/O)."""
        with self._tenant_of(request) as refusal:
            return refusal if refusal is not None else await self.get_response(request)


def _refusal(exc: TenantError) -> HttpResponse:
    return error_response(
        http_status(exc.code), exc.code, str(exc), fields={"tenant": [exc.reason]}
    )
