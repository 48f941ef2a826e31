"""The ``tenant`` battery: which tenant a request belongs to, and keys that carry it.

``single`` (the default) puts every request in one tenant (``id``); ``header`` reads the
id from a header (``X-Tenant-ID``) or the host's subdomain (``subdomain_regex``).
:class:`~toolkit_batteries.tenant.middleware.TenantMiddleware` sets ``request.tenant``
and the current tenant; :func:`tenant_prefix` and :func:`cache_key_function` put it into
storage, queue and cache keys. Importing this package imports no SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Tenant, TenantError
    from .context import (
        NO_TENANT,
        TENANT_ID,
        cache_key_function,
        current_tenant,
        is_valid_tenant_id,
        tenant_prefix,
        using_tenant,
    )

__all__ = [
    "NO_TENANT",
    "TENANT_ID",
    "Tenant",
    "TenantError",
    "cache_key_function",
    "current_tenant",
    "is_valid_tenant_id",
    "tenant_prefix",
    "using_tenant",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "NO_TENANT": "context",
    "TENANT_ID": "context",
    "Tenant": "base",
    "TenantError": "base",
    "cache_key_function": "context",
    "current_tenant": "context",
    "is_valid_tenant_id": "context",
    "tenant_prefix": "context",
    "using_tenant": "context",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
