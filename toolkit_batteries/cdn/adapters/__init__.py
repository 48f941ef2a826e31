"""The cdn adapters, by canonical name (default first, as in the catalog).

Modules are named after the product they talk to: ``cdn_a`` is Cloudflare
(``cloudflare.py: CloudflareCDN``). Values are dotted paths, imported only when an
adapter opens, so the Cloudflare SDK costs nothing to a project on the ``noop`` adapter.
The product name ``cloudflare`` is accepted as well as ``cdn_a`` (the shared
``VENDOR_ALIASES`` table of :mod:`toolkit_batteries.core.loading`).
"""

from __future__ import annotations

__all__ = ["ADAPTERS"]

ADAPTERS: dict[str, str] = {
    "noop": "toolkit_batteries.cdn.adapters.noop.NoopCDN",
    "cdn_a": "toolkit_batteries.cdn.adapters.cloudflare.CloudflareCDN",
}
