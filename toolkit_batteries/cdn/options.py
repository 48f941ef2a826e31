"""Options of the ``cdn`` service (cache purges)."""

from __future__ import annotations

from toolkit_batteries.core.options import option, options_class

__all__ = ["CDNOptions"]


@options_class
class CDNOptions:
    """Options of ``cdn``; adapters ``noop`` (default, discards purges) and ``cdn_a``."""

    api_token: str = option("", secret=True, doc="provider token")
    zone_id: str = option("", doc="zone to purge")
    base_url: str = option("", doc="overrides the API endpoint")
    allow_insecure: bool = option(False, doc="permit a plain-http base_url")
    allow_private: bool = option(
        False,
        doc="permit private, loopback and link-local addresses (checked after DNS resolution)",
    )
