"""The ``geo_a`` adapter (``google``): Google's Geocoding API.

Wire format (the provider's public reference):

* geocode: ``GET {base_url}/maps/api/geocode/json?address=<query>&key=<api_key>``;
* reverse: ``GET {base_url}/maps/api/geocode/json?latlng=<lat>,<lon>&key=<api_key>``;
* the answer is ``{"status": ..., "results": [{"formatted_address", "geometry":
  {"location": {"lat", "lng"}}, "place_id", "types": [...], "address_components":
  [{"long_name", "short_name", "types": [...]}]}], "error_message"?}``, usually with HTTP
  200 whatever the status. ``OK`` answers the results, ``ZERO_RESULTS`` nothing;
  ``OVER_QUERY_LIMIT``/``OVER_DAILY_LIMIT`` raise :class:`GeoRateLimitedError`,
  ``REQUEST_DENIED``/``INVALID_REQUEST`` :class:`GeoProviderError`, ``UNKNOWN_ERROR`` and
  HTTP 5xx ``ServiceUnavailableError``.

``base_url`` defaults to :data:`DEFAULT_BASE_URL`; ``api_key`` is required. The key
travels in the query string, as the API requires, so the URL is never logged or put in
an error (see ``_http``); the provider's ``error_message`` is not repeated either.

The provider's maintained Python client (``googlemaps``) has had no release since 2023
and builds on ``requests`` with its own retry loop; the API is one GET, so the adapter
speaks it through ``httpx`` and the toolkit's guarded transport.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Self

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.core.outbound import provider
from toolkit_batteries.core.tracing import traced

from ..base import Geo, GeoProviderError, GeoRateLimitedError, Place
from ..options import GeoOptions
from ._http import HttpTarget, coordinate

__all__ = ["DEFAULT_BASE_URL", "GEOCODE_PATH", "GoogleGeo", "place_of"]

#: The API's host when ``base_url`` is empty.
DEFAULT_BASE_URL = "https://maps.googleapis.com"
#: The JSON geocoding endpoint under the base URL.
GEOCODE_PATH = "/maps/api/geocode/json"

_DENIED = {
    "REQUEST_DENIED": "denied the request (check api_key and the key's API access)",
    "INVALID_REQUEST": "refused the request as invalid",
}


def place_of(result: Mapping[str, Any]) -> Place:
    """Return the :class:`Place` of one ``results`` entry; raise ``ValueError`` if malformed."""
    location = result["geometry"]["location"]
    components: dict[str, str] = {}
    country = ""
    name = ""
    for part in result.get("address_components") or ():
        types = part.get("types") or ()
        if not types:
            continue
        components.setdefault(str(types[0]), str(part.get("long_name", "")))
        if "country" in types:
            country = str(part.get("short_name", "")).upper()
    types = result.get("types") or ()
    for part in result.get("address_components") or ():
        if types and types[0] in (part.get("types") or ()):
            name = str(part.get("long_name", ""))
            break
    return Place(
        lat=float(location["lat"]),
        lon=float(location["lng"]),
        address=str(result.get("formatted_address", "")),
        name=name,
        country_code=country,
        kind=str(types[0]) if types else "",
        components=MappingProxyType(components),
        provider_id=str(result.get("place_id", "")),
        raw=MappingProxyType(dict(result)),
    )


@traced("_geocode", "_reverse")
class GoogleGeo(Geo):
    """Geocoding through Google's Geocoding JSON API, one guarded GET per call."""

    adapter_name = "geo_a"

    def __init__(self, options: GeoOptions, *, instance: str = "default") -> None:
        """Validate the options (``api_key`` required, ``base_url`` allowed)."""
        super().__init__(instance=instance)
        self._key = provider.required(
            options.api_key, service="geo", field="api_key", adapter="geo_a", instance=instance
        )
        self._http = HttpTarget(
            options.base_url or DEFAULT_BASE_URL,
            field="base_url",
            options=options,
            instance=instance,
        )

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        """Build the adapter; nothing is sent until the first call."""
        return cls(ctx.options, instance=ctx.instance)

    def _call(self, params: dict[str, str]) -> list[Place]:
        params["key"] = self._key
        status, body = self._http.get_json(GEOCODE_PATH, params)
        api_status = body.get("status") if isinstance(body, dict) else None
        if status == 429 or api_status in ("OVER_QUERY_LIMIT", "OVER_DAILY_LIMIT"):
            raise GeoRateLimitedError("the provider's query quota is spent", instance=self.instance)
        if api_status in _DENIED:
            raise GeoProviderError(f"the provider {_DENIED[api_status]}", instance=self.instance)
        if status >= 500 or api_status == "UNKNOWN_ERROR":
            raise ServiceUnavailableError(
                "geo", "the provider failed (retry later)", instance=self.instance
            )
        if status != 200 or api_status not in ("OK", "ZERO_RESULTS"):
            raise GeoProviderError(
                f"the provider answered HTTP {status} without a known status",
                instance=self.instance,
            )
        results = body.get("results") or []
        try:
            return [place_of(result) for result in results]
        except (KeyError, TypeError, ValueError, AttributeError):
            raise GeoProviderError(
                "the provider's answer has a result without geometry.location",
                instance=self.instance,
            ) from None

    def _geocode(self, query: str) -> list[Place]:
        return self._call({"address": query})

    def _reverse(self, lat: float, lon: float) -> Place | None:
        places = self._call({"latlng": f"{coordinate(lat)},{coordinate(lon)}"})
        return places[0] if places else None

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()
