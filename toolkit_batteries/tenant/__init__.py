"""The ``tenant`` battery: which tenant a request belongs to, and keys that carry it.

``single`` (the default) puts every request in one tenant (``id``); ``header`` reads the
id from a header (``X-Tenant-ID``) or the host's subdomain (``subdomain_regex``).
:class:`~toolkit_batteries.tenant.middleware.TenantMiddleware` sets ``request.tenant``
and the current tenant; :func:`tenant_prefix` and :func:`cache_key_function` put it into
storage, queue and cache keys. Importing this package imports no SDK.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Tenant TenantError",
    context=(
        "NO_TENANT TENANT_ID cache_key_function current_tenant is_valid_tenant_id tenant_prefix "
        "using_tenant"
    ),
)
