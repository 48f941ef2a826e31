"""The ``geo`` battery: geocoding and reverse geocoding behind one interface.

``services.geo().geocode("Berlin")`` answers a list of :class:`Place`;
``services.geo().reverse(52.52, 13.405)`` one place or ``None``. Adapters: ``static``
(the default: a JSON gazetteer file), ``geo_a`` (a geocoding web API, alias ``google``)
and ``geo_b`` (an open geocoder, alias ``osm``/``nominatim``, at most one request per
second through the ratelimit battery). No adapter's HTTP client is imported here.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base=(
        "Geo GeoError GeoProviderError GeoRateLimitedError MAX_QUERY_LENGTH Place check_point "
        "check_query"
    ),
)
