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
    # Not in the spec's table: the "unknown tenants answer 400" needs a list of
    # the known ones. Empty (the default) accepts every well-formed id.
    allowed: tuple[str, ...] = option(
        [], doc="known tenant ids (header); empty accepts every well-formed id"
    )
