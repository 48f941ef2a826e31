"""The geo adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so httpx costs nothing to a
project on the ``static`` adapter. ``google`` and ``osm`` are the shared vendor aliases
(``core.loading``); ``nominatim`` is this battery's own.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "static": "toolkit_batteries.geo.adapters.static.StaticGeo",
    "geo_a": "toolkit_batteries.geo.adapters.geo_a.GeoAGeo",
    "geo_b": "toolkit_batteries.geo.adapters.geo_b.NominatimGeo",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {"nominatim": "geo_b"}
