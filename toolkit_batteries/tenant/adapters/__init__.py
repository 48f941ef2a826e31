"""The tenant adapters."""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS = adapter_paths(__name__, "single.SingleTenant header.HeaderTenant")

#: ``subdomain`` is the header adapter with ``subdomain_regex`` set.
ALIASES: dict[str, str] = {"subdomain": "header"}
