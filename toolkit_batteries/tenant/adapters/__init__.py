"""The tenant adapters, by canonical name (default first, as in the catalog)."""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "single": "toolkit_batteries.tenant.adapters.single.SingleTenant",
    "header": "toolkit_batteries.tenant.adapters.header.HeaderTenant",
}

#: ``subdomain`` is the header adapter with ``subdomain_regex`` set.
ALIASES: dict[str, str] = {"subdomain": "header"}
