"""Options of the ``tenant`` service (tenant resolution)."""

from __future__ import annotations

from toolkit_batteries.core.options import option, options_class

__all__ = ["TenantOptions"]


@options_class
class TenantOptions:
    """Options of ``tenant``; adapters ``single`` (default) and ``header``."""

    header: str = option("X-Tenant-ID", doc="header carrying the tenant id")
    subdomain_regex: str = option("", doc="optional subdomain pattern")
    id: str = option("default", doc="fixed tenant id (single)")
