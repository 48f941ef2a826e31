"""Options of the ``analytics`` service (event tracking, identify, group calls)."""

from __future__ import annotations

from toolkit_batteries.core.groups import OutboundSwitches
from toolkit_batteries.core.option_kinds import required, url, warn_when_set
from toolkit_batteries.core.options import ByteSize, option, options_class

__all__ = ["AnalyticsOptions"]


@options_class
class AnalyticsOptions(OutboundSwitches):
    """Options of ``analytics``; adapters ``log`` (default) and ``analytics_b``."""

    __checks__ = (
        warn_when_set(
            "toolkit_analytics.W001",
            "is set but the log adapter never reads it",
            adapters=("log",),
            hint='set "adapter": "analytics_b" to send events to the provider',
        ).on("api_key", "endpoint"),
        required(
            "toolkit_analytics.E002",
            adapters=("analytics_b",),
            hint="set ANALYTICS__DEFAULT__API_KEY to the project's write key",
        ).on("api_key"),
        url(
            "toolkit_analytics.E003",
            adapters=("analytics_b",),
            hint="endpoint is an https:// URL without credentials; allow_insecure permits http, "
            "allow_private private addresses",
        ).on("endpoint"),
    )

    api_key: str = option("", secret=True, doc="backend write key")
    endpoint: str = option("", doc="custom backend URL")
    anonymous_id: str = option("anonymous", doc="fallback identity for anonymous events")
    group_type: str = option("organization", doc="group type for group calls")
    max_properties_bytes: ByteSize = option(
        ByteSize(65536), doc="bound on the JSON-encoded size of an event's properties"
    )
    max_properties: int = option(0, doc="bound on properties per call; 0 = no bound")
