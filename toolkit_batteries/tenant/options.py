"""Options of the ``tenant`` service (tenant resolution)."""

from __future__ import annotations

from toolkit_batteries.core.option_kinds import opens, relation
from toolkit_batteries.core.options import option, options_class

from .context import is_valid_tenant_id

__all__ = ["TenantOptions"]


_REGEX_HINT = "e.g. ^(?P<tenant>[a-z0-9-]+)\\.example\\.com$"
_ID_HINT = "use 1-63 letters, digits, _ or -, starting with a letter or digit"


@options_class
class TenantOptions:
    """Options of ``tenant``; adapters ``single`` (default) and ``header``."""

    __checks__ = (
        opens(
            "toolkit_tenant.E003",
            "toolkit_batteries.tenant.adapters.header:compile_subdomain_regex",
            hint=_REGEX_HINT,
        ).on("subdomain_regex"),
        opens(
            "toolkit_tenant.E005",
            "toolkit_batteries.tenant.adapters.header:header_meta_key",
            skip_empty=True,
            hint="use a header name such as X-Tenant-ID",
        ).on("header"),
        relation(
            "toolkit_tenant.E002",
            lambda o: None if is_valid_tenant_id(o.id) else 'option "id" is not a valid tenant id',
            hint=_ID_HINT,
        ),
        relation(
            "toolkit_tenant.E002",
            lambda o: 'option "id" is not one of "allowed"' if o.id not in o.allowed else None,
            adapters=("single",),
            when=lambda o: bool(o.allowed) and is_valid_tenant_id(o.id),
            hint='add the id to "allowed", or leave "allowed" empty',
        ),
        relation(
            "toolkit_tenant.E004",
            lambda o: (
                None
                if all(is_valid_tenant_id(item) for item in o.allowed or ())
                else 'option "allowed" holds a malformed tenant id'
            ),
            hint=_ID_HINT,
        ),
        relation(
            "toolkit_tenant.W001",
            lambda o: (
                'the single adapter reads neither "header" nor "subdomain_regex"'
                if o.subdomain_regex or o.header
                else None
            ),
            adapters=("single",),
            warning=True,
            hint='use adapter "header" to resolve tenants from requests',
        ),
    )

    # The spec's default is X-Tenant-ID; here an empty value (the default) means
    # X-Tenant-ID without subdomain_regex and *no header source* with it: a header a
    # client sets must not override the host unless the operator enabled it by name.
    header: str = option(
        "",
        doc="header carrying the tenant id; empty: X-Tenant-ID, or none with subdomain_regex",
    )
    subdomain_regex: str = option("", doc="optional subdomain pattern")
    id: str = option("default", doc="fixed tenant id (single)")
    # Not in the spec's table: the "unknown tenants answer 400" needs a list of
    # the known ones. Empty (the default) accepts every well-formed id.
    allowed: tuple[str, ...] = option(
        [], doc="known tenant ids (header); empty accepts every well-formed id"
    )
