"""Options of the ``analytics`` service (event tracking, identify, group calls)."""

from __future__ import annotations

from toolkit_batteries.core.options import ByteSize, option, options_class

__all__ = ["AnalyticsOptions"]


@options_class
class AnalyticsOptions:
    """Options of ``analytics``; adapters ``log`` (default) and ``analytics_b``."""

    api_key: str = option("", secret=True, doc="backend write key")
    endpoint: str = option("", doc="custom backend URL")
    anonymous_id: str = option("anonymous", doc="fallback identity for anonymous events")
    group_type: str = option("organization", doc="group type for group calls")
    max_properties_bytes: ByteSize = option(
        ByteSize(65536), doc="bound on the JSON-encoded size of an event's properties"
    )
    max_properties: int = option(0, doc="bound on properties per call; 0 = no bound")
    allow_insecure: bool = option(False, doc="permit a plain-http endpoint")
    allow_private: bool = option(
        False,
        doc="permit private, loopback and link-local addresses (checked after DNS resolution)",
    )
