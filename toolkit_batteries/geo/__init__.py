"""The ``geo`` battery: geocoding and reverse geocoding behind one interface.

``services.geo().geocode("Berlin")`` answers a list of :class:`Place`;
``services.geo().reverse(52.52, 13.405)`` one place or ``None``. Adapters: ``static``
(the default: a JSON gazetteer file), ``geo_a`` (a geocoding web API, alias ``google``)
and ``geo_b`` (an open geocoder, alias ``osm``/``nominatim``, at most one request per
second through the ratelimit battery). No adapter's HTTP client is imported here.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        MAX_QUERY_LENGTH,
        Geo,
        GeoError,
        GeoProviderError,
        GeoRateLimitedError,
        Place,
        check_point,
        check_query,
    )

__all__ = [
    "MAX_QUERY_LENGTH",
    "Geo",
    "GeoError",
    "GeoProviderError",
    "GeoRateLimitedError",
    "Place",
    "check_point",
    "check_query",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Geo": "base",
    "GeoError": "base",
    "GeoProviderError": "base",
    "GeoRateLimitedError": "base",
    "MAX_QUERY_LENGTH": "base",
    "Place": "base",
    "check_point": "base",
    "check_query": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
