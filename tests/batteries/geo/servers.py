"""Strict stand-ins of the two geocoding providers, on the shared provider-server base.

* :class:`FakeGeoA`: the Google Geocoding API. ``GET /maps/api/geocode/json`` with
  ``address=`` or ``latlng=lat,lng`` and ``key=``; answers ``{"status", "results":
  [{"formatted_address", "geometry": {"location": {"lat", "lng"}}, "place_id", "types",
  "address_components"}]}`` with HTTP 200, ``REQUEST_DENIED`` (and an ``error_message``)
  for a missing or wrong key, ``ZERO_RESULTS`` for nothing found, and HTTP 400
  ``INVALID_REQUEST`` (with an ``error_message``) for neither ``address`` nor ``latlng``,
  an empty ``address``, a ``latlng`` that is not two in-range numbers, or another method.
* :class:`FakeGeoB`: Nominatim. ``GET /search?q=&format=jsonv2`` answers a list of
  jsonv2 objects (string coordinates; ``format=json`` the same with ``class`` for
  ``category``), ``GET /reverse?lat=&lon=&format=jsonv2`` one object or ``{"error":
  "Unable to geocode"}``; HTTP 403 with an HTML page for a missing or wrong User-Agent,
  an XML body when ``format`` is left out (Nominatim's default), 400 with its JSON error
  body for an unknown ``format``, an empty ``q`` or a ``lat``/``lon`` that is not a number.

Both serve :data:`PLACES`, record every request (:attr:`seen`: path, query, headers and
the time on :attr:`clock`) and can be told to answer something else (:attr:`forced`).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any

from tests.support.provider_server import Answer, ProviderServer, Received

#: The contract's gazetteer: name, address, lat, lon, country code, city.
PLACES: list[dict[str, Any]] = [
    {
        "name": "Berlin",
        "address": "Berlin, Germany",
        "lat": 52.5170365,
        "lon": 13.3888599,
        "country_code": "DE",
        "kind": "city",
        "components": {"city": "Berlin", "country": "Germany"},
        "id": "berlin",
        "radius_m": 5000,
    },
    {
        "name": "Paris",
        "address": "Paris, France",
        "lat": 48.8588897,
        "lon": 2.3200410,
        "country_code": "FR",
        "kind": "city",
        "components": {"city": "Paris", "country": "France"},
        "id": "paris",
        "radius_m": 5000,
    },
]

#: The geo_a test key (scanned for in logs and errors).
KEY = "AIzaSy-test-key-7f3a9c1e5b2d4f60"


#: The request record the geo tests read (path, query, headers, ``at``).
Seen = Received


def _distance_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = (
        math.sin((p2 - p1) / 2) ** 2
        + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    )
    return 2 * 6_371_008.8 * math.asin(math.sqrt(a))


def matching(query: str) -> list[dict[str, Any]]:
    """Return the places whose name or address contains ``query`` (case-insensitive)."""
    text = " ".join(query.split()).casefold()
    return [p for p in PLACES if text in p["address"].casefold() or text in p["name"].casefold()]


def nearest(lat: float, lon: float) -> dict[str, Any] | None:
    """Return the place within its radius of the point, nearest first."""
    found = [(p, _distance_m(lat, lon, p["lat"], p["lon"])) for p in PLACES]
    found = [(p, d) for p, d in found if d <= p["radius_m"]]
    return min(found, key=lambda pair: pair[1])[0] if found else None


class _Server(ProviderServer):
    """A geocoder stand-in: GET only, its key or User-Agent checked by :meth:`refusal`."""

    content_types = ()

    def __init__(self, key: str, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(key, clock=clock)
        #: ``(status, content_type, body bytes)`` answered instead, when set.
        self.forced: tuple[int, str, bytes] | None = None

    @property
    def seen(self) -> list[Received]:
        return self._records()

    def url(self, host: str = "127.0.0.1") -> str:  # type: ignore[override]
        return f"http://{host}:{self.port}"

    def __enter__(self) -> _Server:
        self.start()
        return self

    def authorized(self, headers: dict[str, str]) -> bool:
        return True  # the key is a query parameter (geo_a), the agent a header (geo_b)

    def malformed(self, request: Received) -> Answer | None:
        return None  # refusals have the provider's own content types: see :meth:`refusal`

    def refusal(self, seen: Received) -> tuple[int, str, bytes] | None:
        """Return the provider's refusal of ``seen``, or ``None`` when it takes it."""
        return None

    def respond(self, seen: Received) -> tuple[int, str, bytes]:  # pragma: no cover
        raise NotImplementedError

    def answer(self, handler: Any, request: Received) -> None:
        status, kind, body = self.forced or self.refusal(request) or self.respond(request)
        handler.send_json(status, body, {"Content-Type": kind})


def _json(status: int, data: Any) -> tuple[int, str, bytes]:
    return status, "application/json; charset=UTF-8", json.dumps(data).encode()


def _invalid_a(message: str) -> tuple[int, str, bytes]:
    return _json(400, {"error_message": message, "results": [], "status": "INVALID_REQUEST"})


def _coordinates(*texts: str) -> tuple[float, float] | None:
    """Return ``(lat, lon)`` from two numeric texts in range, or ``None``."""
    try:
        lat, lon = (float(text) for text in texts)
    except ValueError:
        return None
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):  # NaN fails both comparisons
        return None
    return lat, lon


class FakeGeoA(_Server):
    """The Google Geocoding API's ``/maps/api/geocode/json``."""

    def __init__(self, key: str = KEY, **kwargs: Any) -> None:
        super().__init__(key, **kwargs)

    @staticmethod
    def result(place: dict[str, Any]) -> dict[str, Any]:
        return {
            "address_components": [
                {
                    "long_name": place["name"],
                    "short_name": place["name"],
                    "types": ["locality", "political"],
                },
                {
                    "long_name": place["components"]["country"],
                    "short_name": place["country_code"],
                    "types": ["country", "political"],
                },
            ],
            "formatted_address": place["address"],
            "geometry": {
                "location": {"lat": place["lat"], "lng": place["lon"]},
                "location_type": "APPROXIMATE",
            },
            "place_id": f"ChIJ-{place['id']}",
            "types": ["locality", "political"],
        }

    def refusal(self, seen: Received) -> tuple[int, str, bytes] | None:
        if not seen.path.endswith("/maps/api/geocode/json"):
            return 404, "text/html", b"<html>Not Found</html>"
        if seen.method != "GET":
            return _invalid_a("Only GET requests are supported.")
        keys = seen.query.get("key")
        if not keys or keys != [self.key]:
            message = (
                "You must use an API key to authenticate each request to Google Maps Platform APIs."
                if not keys or not keys[0]
                else "The provided API key is invalid. "
            )
            return _json(200, {"error_message": message, "results": [], "status": "REQUEST_DENIED"})
        address, latlng = seen.query.get("address"), seen.query.get("latlng")
        if address is None and latlng is None:
            return _invalid_a(
                "Invalid request. Missing the 'address', 'components', 'latlng' "
                "or 'place_id' parameter."
            )
        if address is not None and not address[0].strip():
            return _invalid_a("Invalid request. Invalid 'address' parameter.")
        if latlng is not None and (
            len(latlng[0].split(",")) != 2 or _coordinates(*latlng[0].split(",")) is None
        ):
            return _invalid_a("Invalid request. Invalid 'latlng' parameter.")
        return None

    def respond(self, seen: Received) -> tuple[int, str, bytes]:
        if seen.path != "/maps/api/geocode/json":
            return 404, "text/html", b"<html>Not Found</html>"
        if "address" in seen.query:
            places = matching(seen.query["address"][0])
        else:
            lat, lng = _coordinates(*seen.query["latlng"][0].split(","))  # type: ignore[misc]
            place = nearest(lat, lng)
            places = [place] if place else []
        results = [self.result(p) for p in places]
        return _json(200, {"results": results, "status": "OK" if results else "ZERO_RESULTS"})


def _invalid_b(message: str) -> tuple[int, str, bytes]:
    return _json(400, {"error": {"code": 400, "message": message}})


class FakeGeoB(_Server):
    """Nominatim's ``/search`` and ``/reverse`` (``format=jsonv2`` or ``json``)."""

    def __init__(self, user_agent: str, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self.user_agent = user_agent

    @staticmethod
    def item(place: dict[str, Any], form: str = "jsonv2") -> dict[str, Any]:
        found = {
            "place_id": 240109189,
            "licence": "Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright",
            "osm_type": "relation",
            "osm_id": 62422 if place["id"] == "berlin" else 7444,
            "lat": str(place["lat"]),
            "lon": str(place["lon"]),
            "category": "boundary",
            "type": "administrative",
            "place_rank": 8,
            "importance": 0.85,
            "addresstype": place["kind"],
            "name": place["name"],
            "display_name": place["address"],
            "address": {
                "city": place["components"]["city"],
                "country": place["components"]["country"],
                "country_code": place["country_code"].lower(),
            },
            "boundingbox": ["52.3", "52.6", "13.0", "13.7"],
        }
        if form == "json":  # the older shape: class for category, no place_rank
            found["class"] = found.pop("category")
            del found["place_rank"]
        return found

    def refusal(self, seen: Received) -> tuple[int, str, bytes] | None:
        if seen.headers.get("user-agent") != self.user_agent:
            return 403, "text/html", b"<html><body>Access blocked</body></html>"
        if seen.path not in ("/search", "/reverse"):
            return 404, "text/html", b"<html>Not Found</html>"
        form = seen.query.get("format", ["xml"])[0]
        if form not in ("xml", "json", "jsonv2", "geojson", "geocodejson"):
            return _invalid_b(
                "Parameter 'format' must be one of: xml, json, jsonv2, geojson, geocodejson"
            )
        if form not in ("json", "jsonv2"):  # XML is the default when format is left out
            return 200, "text/xml; charset=UTF-8", b"<?xml version='1.0'?><searchresults/>"
        if seen.path == "/search" and not seen.query.get("q", [""])[0].strip():
            return _invalid_b("Nothing to search for.")
        if seen.path == "/reverse":
            for name in ("lat", "lon"):
                if name not in seen.query:
                    return _invalid_b(f"Need '{name}' parameter.")
            if _coordinates(seen.query["lat"][0], seen.query["lon"][0]) is None:
                return _invalid_b("Invalid coordinates.")
        return None

    def respond(self, seen: Received) -> tuple[int, str, bytes]:
        form = seen.query["format"][0]
        if seen.path == "/search":
            return _json(200, [self.item(p, form) for p in matching(seen.query["q"][0])])
        place = nearest(float(seen.query["lat"][0]), float(seen.query["lon"][0]))
        return _json(200, self.item(place, form) if place else {"error": "Unable to geocode"})
