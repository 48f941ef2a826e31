"""Options of the ``geo`` service (geocoding and reverse geocoding)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import OutboundSwitches
from toolkit_batteries.core.option_kinds import non_negative, opens, required, url
from toolkit_batteries.core.options import ByteSize, Duration, option, options_class

__all__ = ["GeoOptions"]


_NEGATIVE = '{where}: option "timeout" or "max_response_body" is negative'
_USER_AGENT_HINT = 'name your application, e.g. "myapp/1.0 (ops@example.com)"'
_URL_HINT = (
    "use an https:// URL; http needs allow_insecure and a loopback or private host allow_private"
)


@options_class
class GeoOptions(OutboundSwitches):
    """Options of ``geo``; adapters ``static`` (default), ``geo_a`` and ``geo_b``."""

    __checks__ = (
        non_negative(
            "toolkit_geo.E006",
            each=False,
            message=_NEGATIVE,
            hint="use a positive value, or 0 for the adapter's default",
        ).on("timeout", "max_response_body"),
        required(
            "toolkit_geo.E002",
            adapters=("geo_a",),
            hint="set GEO__<INSTANCE>__API_KEY from your secret store",
        ).on("api_key"),
        opens(
            "toolkit_geo.E004",
            "toolkit_batteries.geo.base:check_user_agent",
            adapters=("geo_b",),
            hint=_USER_AGENT_HINT,
        ).on("user_agent"),
        url(
            "toolkit_geo.E003",
            adapters=("geo_a",),
            default="https://maps.googleapis.com",
            hint=_URL_HINT,
        ).on("base_url"),
        url(
            "toolkit_geo.E003",
            adapters=("geo_b",),
            default="https://nominatim.openstreetmap.org",
            hint=_URL_HINT,
        ).on("endpoint"),
    )

    api_key: str = option("", secret=True, doc="provider key")
    base_url: str = option("", doc="overrides the geo_a API base URL")
    endpoint: str = option("", doc="overrides the API endpoint of geo_b")
    timeout: Duration = option(timedelta(0), doc="bound on HTTP requests; 0 = adapter default")
    path: str = option("", doc="JSON file of the static adapter")
    max_response_body: ByteSize = option(
        ByteSize(0), doc="bound on response bodies; 0 = adapter default"
    )
    user_agent: str = option("", doc="User-Agent sent by geo_b")
