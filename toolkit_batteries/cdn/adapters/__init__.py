"""The cdn adapters: ``cdn_a`` is Cloudflare (``cloudflare.CloudflareCDN``, alias
``cloudflare`` from the catalog row); its SDK costs nothing to a project on ``noop``.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(__name__, "noop.NoopCDN cdn_a=cloudflare.CloudflareCDN")
