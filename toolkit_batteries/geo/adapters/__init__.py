"""The geo adapters: ``geo_a`` is Google's Geocoding API (``google.GoogleGeo``), ``geo_b``
is Nominatim, OpenStreetMap's geocoder (``nominatim.NominatimGeo``); the product names
(``google``; ``nominatim``, ``osm``) come from the catalog row. httpx costs nothing to a
project on ``static``.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(
    __name__, "static.StaticGeo geo_a=google.GoogleGeo geo_b=nominatim.NominatimGeo"
)
