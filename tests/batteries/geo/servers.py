"""Geocoding providers on 127.0.0.1, speaking their public wire formats.

* :class:`FakeGeoA`: the geocoding web API. ``GET /maps/api/geocode/json`` with
  ``address=`` or ``latlng=lat,lng`` and ``key=``; answers ``{"status", "results":
  [{"formatted_address", "geometry": {"location": {"lat", "lng"}}, "place_id", "types",
  "address_components"}]}`` with HTTP 200, ``REQUEST_DENIED`` (and an ``error_message``)
  for a wrong key, ``ZERO_RESULTS`` for nothing found.
* :class:`FakeGeoB`: the open geocoder. ``GET /search?q=&format=jsonv2`` answers a list of
  jsonv2 objects (string coordinates), ``GET /reverse?lat=&lon=&format=jsonv2`` one object
  or ``{"error": "Unable to geocode"}``; HTTP 403 with an HTML page for a missing or
  wrong User-Agent, 400 for another ``format``.

Both serve :data:`PLACES`, record every request (:class:`Seen`: path, query, headers and
the time on :attr:`clock`) and can be told to answer something else (:attr:`forced`).
"""

from __future__ import annotations

import json
import math
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

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


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    at: float


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


class _Server:
    """A threaded HTTP server that records requests and answers through :meth:`answer`."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.seen: list[Seen] = []
        #: ``(status, content_type, body bytes)`` answered instead, when set.
        self.forced: tuple[int, str, bytes] | None = None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}"

    def __enter__(self) -> _Server:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, seen: Seen) -> tuple[int, str, bytes]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes

            def do_GET(self) -> None:
                parts = urllib.parse.urlsplit(self.path)
                seen = Seen(
                    parts.path,
                    urllib.parse.parse_qs(parts.query, keep_blank_values=True),
                    {k.lower(): v for k, v in self.headers.items()},
                    server.clock(),
                )
                with server._lock:
                    server.seen.append(seen)
                status, kind, body = server.forced or server.answer(seen)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        return Handler


def _json(status: int, data: Any) -> tuple[int, str, bytes]:
    return status, "application/json; charset=UTF-8", json.dumps(data).encode()


class FakeGeoA(_Server):
    """The geocoding web API's ``/maps/api/geocode/json``."""

    def __init__(self, key: str = KEY, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.key = key

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

    def answer(self, seen: Seen) -> tuple[int, str, bytes]:
        if seen.path != "/maps/api/geocode/json":
            return 404, "text/html", b"<html>Not Found</html>"
        if seen.query.get("key") != [self.key]:
            return _json(
                200,
                {
                    "error_message": "The provided API key is invalid. ",
                    "results": [],
                    "status": "REQUEST_DENIED",
                },
            )
        if "address" in seen.query:
            places = matching(seen.query["address"][0])
        elif "latlng" in seen.query:
            lat, lng = (float(x) for x in seen.query["latlng"][0].split(","))
            place = nearest(lat, lng)
            places = [place] if place else []
        else:
            return _json(400, {"results": [], "status": "INVALID_REQUEST"})
        results = [self.result(p) for p in places]
        return _json(200, {"results": results, "status": "OK" if results else "ZERO_RESULTS"})


class FakeGeoB(_Server):
    """The open geocoder's ``/search`` and ``/reverse`` (``format=jsonv2``)."""

    def __init__(self, user_agent: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.user_agent = user_agent

    @staticmethod
    def item(place: dict[str, Any]) -> dict[str, Any]:
        return {
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

    def answer(self, seen: Seen) -> tuple[int, str, bytes]:
        if seen.headers.get("user-agent") != self.user_agent:
            return 403, "text/html", b"<html><body>Access blocked</body></html>"
        if seen.query.get("format") != ["jsonv2"]:
            return _json(
                400,
                {
                    "error": {
                        "code": 400,
                        "message": "Parameter 'format' must be one of: xml, json, jsonv2, "
                        "geojson, geocodejson",
                    }
                },
            )
        if seen.path == "/search":
            return _json(200, [self.item(p) for p in matching(seen.query["q"][0])])
        if seen.path == "/reverse":
            place = nearest(float(seen.query["lat"][0]), float(seen.query["lon"][0]))
            return _json(200, self.item(place) if place else {"error": "Unable to geocode"})
        return 404, "text/html", b"<html>Not Found</html>"
