"""Open the tenant battery the real way (``TOOLKIT``, then ``services.tenant()``).

Three variants over the two adapters: ``single`` (``id = "acme"``), ``header``
(``X-Tenant-ID``) and ``subdomain`` (the header adapter with ``subdomain_regex``). Each
knows how to make a request that belongs to one of its tenants; every variant lists
``acme`` and ``globex`` as ``allowed`` (single serves ``acme`` only).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.test import override_settings

from tests.asgi import asgi_request
from toolkit_batteries import services

VARIANTS = ("single", "header", "subdomain")
MIDDLEWARE = ["toolkit_batteries.tenant.middleware.TenantMiddleware"]
URLCONF = "tests.batteries.tenant.urls"
SUBDOMAIN = r"^(?P<tenant>[a-z0-9-]+)\.example\.com$"


def tenant_block(variant: str, **options: Any) -> dict[str, Any]:
    """Return the ``TOOLKIT["tenant"]`` envelope of ``variant``."""
    base: dict[str, Any] = {"allowed": ["acme", "globex"]}
    if variant == "single":
        return {"adapter": "single", "options": {**base, "id": "acme", **options}}
    if variant == "subdomain":
        base["subdomain_regex"] = SUBDOMAIN
    return {"adapter": "header", "options": {**base, **options}}


@dataclass
class Opened:
    """The opened service and how to address one of its tenants."""

    variant: str
    tenant: Any
    known: tuple[str, ...]
    extra: dict[str, str] = field(default_factory=dict)

    def headers_for(self, tenant: str) -> dict[str, str]:
        """Return the test client's keyword arguments of a request for ``tenant``."""
        if self.variant == "header":
            return {"headers": {"X-Tenant-ID": tenant}}
        if self.variant == "subdomain":
            return {"headers": {"Host": f"{tenant}.example.com"}}
        assert tenant == "acme", "single serves one tenant"
        return {}

    def raw_headers(self, tenant: str) -> dict[str, str]:
        """Return the HTTP headers of a request for ``tenant`` (Host included)."""
        return {"Host": "testserver", **self.headers_for(tenant).get("headers", {})}

    def request_for(self, tenant: str, path: str = "/whoami") -> Any:
        """Return a RequestFactory GET request for ``tenant``."""
        from django.test import RequestFactory

        return RequestFactory().get(path, **self.headers_for(tenant))


def configured(variant: str, **options: Any) -> Any:
    """Override settings for ``variant`` (TOOLKIT, middleware, test URLconf)."""
    return override_settings(
        TOOLKIT={"tenant": tenant_block(variant, **options)},
        MIDDLEWARE=MIDDLEWARE,
        ROOT_URLCONF=URLCONF,
        ALLOWED_HOSTS=["*"],
    )


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest) -> Iterator[Opened]:
    with configured(request.param):
        known = ("acme",) if request.param == "single" else ("acme", "globex")
        yield Opened(request.param, services.tenant(), known)


async def asgi_get(path: str, headers: dict[str, str]) -> tuple[int, bytes]:
    """GET ``path`` through Django's real ASGI handler (a scope of our own: see tests/asgi)."""
    from django.core.handlers.asgi import ASGIHandler

    return await asgi_request(ASGIHandler(), path, headers)
