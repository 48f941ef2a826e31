"""Options of the ``cdn`` service (cache purges)."""

from __future__ import annotations

from toolkit_batteries.core.groups import OutboundSwitches
from toolkit_batteries.core.option_kinds import relation, url, warn_when_set
from toolkit_batteries.core.options import option, options_class

__all__ = ["CDNOptions"]


_NOOP_HINT = 'set "adapter": "cdn_a" to purge the provider\'s cache'


def _token_and_zone(options: CDNOptions) -> str | None:
    """Require the token and a well-formed zone id the provider's API is called with."""
    from .base import ZONE_ID

    if (options.api_token or "").strip() and ZONE_ID.fullmatch((options.zone_id or "").strip()):
        return None
    return (
        'options "api_token" and "zone_id" (letters and digits) are required by the cdn_a adapter'
    )


@options_class
class CDNOptions(OutboundSwitches):
    """Options of ``cdn``; adapters ``noop`` (default, discards purges) and ``cdn_a``."""

    __checks__ = (
        warn_when_set(
            "toolkit_cdn.W001",
            "is set but the noop adapter discards every purge",
            adapters=("noop",),
            hint=_NOOP_HINT,
        ).on("api_token", "zone_id"),
        url(
            "toolkit_cdn.E003",
            adapters=("cdn_a",),
            hint="base_url is an https:// URL without credentials; allow_insecure permits http, "
            "allow_private private addresses",
        ).on("base_url"),
        relation(
            "toolkit_cdn.E002",
            _token_and_zone,
            adapters=("cdn_a",),
            hint="set CDN__DEFAULT__API_TOKEN and CDN__DEFAULT__ZONE_ID",
        ),
    )

    api_token: str = option("", secret=True, doc="provider token")
    zone_id: str = option("", doc="zone to purge")
    base_url: str = option("", doc="overrides the API endpoint")
