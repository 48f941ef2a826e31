"""The cdn adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so the provider SDK costs
nothing to a project on the ``noop`` adapter. The vendor alias ``cloudflare`` ->
``cdn_a`` lives in the shared ``VENDOR_ALIASES`` table of
:mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "noop": "toolkit_batteries.cdn.adapters.noop.NoopCDN",
    "cdn_a": "toolkit_batteries.cdn.adapters.cdn_a.ProviderCDN",
}

#: Battery-specific aliases (alias -> canonical); the shared vendor table covers cloudflare.
ALIASES: dict[str, str] = {}
