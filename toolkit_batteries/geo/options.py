"""Options of the ``geo`` service (geocoding and reverse geocoding)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.options import ByteSize, Duration, option, options_class

__all__ = ["GeoOptions"]


@options_class
class GeoOptions:
    """Options of ``geo``; adapters ``static`` (default), ``geo_a`` and ``geo_b``."""

    api_key: str = option("", secret=True, doc="provider key")
    base_url: str = option("", doc="overrides the geo_a API base URL")
    endpoint: str = option("", doc="overrides the API endpoint of geo_b")
    timeout: Duration = option(timedelta(0), doc="bound on HTTP requests; 0 = adapter default")
    path: str = option("", doc="JSON file of the static adapter")
    max_response_body: ByteSize = option(
        ByteSize(0), doc="bound on response bodies; 0 = adapter default"
    )
    allow_insecure: bool = option(False, doc="permit an http base URL or endpoint")
    allow_private: bool = option(
        False, doc="permit private, loopback and link-local dialing (logged at startup)"
    )
    user_agent: str = option("", doc="User-Agent sent by geo_b")
