"""The geo adapters, by canonical name (default first, as in the catalog).

Modules are named after the product they talk to: ``geo_a`` is Google's Geocoding API
(``google.py: GoogleGeo``), ``geo_b`` is Nominatim, OpenStreetMap's geocoder
(``nominatim.py: NominatimGeo``). Values are dotted paths, imported only when an adapter
opens, so httpx costs nothing to a project on the ``static`` adapter. The product
names (``google``; ``nominatim``, ``osm``) come from the battery's catalog row.
"""

from __future__ import annotations

__all__ = ["ADAPTERS"]

ADAPTERS: dict[str, str] = {
    "static": "toolkit_batteries.geo.adapters.static.StaticGeo",
    "geo_a": "toolkit_batteries.geo.adapters.google.GoogleGeo",
    "geo_b": "toolkit_batteries.geo.adapters.nominatim.NominatimGeo",
}
