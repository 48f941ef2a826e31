"""The geocoder stand-ins refuse what Google Geocoding and Nominatim refuse; the adapters pass.

Malformed requests go raw (urllib) so the server's refusal is what is tested; the adapter
tests then show that every request the battery sends is of the accepted kind.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

import pytest

from .conftest import AGENT, SleepingClock, geo_a_block, geo_b_block, open_geo
from .servers import KEY, FakeGeoA, FakeGeoB


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    """GET ``url``; return ``(status, content type, body)``."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.headers["Content-Type"], answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.headers["Content-Type"], refused.read()


@pytest.mark.parametrize(
    ("query", "status", "answer"),
    [
        ({"address": "Berlin"}, 200, "REQUEST_DENIED"),
        ({"address": "Berlin", "key": ""}, 200, "REQUEST_DENIED"),
        ({"address": "Berlin", "key": "AIza-other"}, 200, "REQUEST_DENIED"),
        ({"key": KEY}, 400, "INVALID_REQUEST"),
        ({"key": KEY, "address": " "}, 400, "INVALID_REQUEST"),
        ({"key": KEY, "latlng": "52.5"}, 400, "INVALID_REQUEST"),
        ({"key": KEY, "latlng": "north,east"}, 400, "INVALID_REQUEST"),
        ({"key": KEY, "latlng": "95,13"}, 400, "INVALID_REQUEST"),
    ],
    ids=[
        "no-key", "empty-key", "other-key", "no-address", "blank-address",
        "one-coordinate", "words", "out-of-range",
    ],
)  # fmt: skip
def test_google_refuses_malformed_geocodes(query: dict[str, str], status: int, answer: str):
    with FakeGeoA() as server:
        got, kind, body = get(
            f"{server.url()}/maps/api/geocode/json?{urllib.parse.urlencode(query)}"
        )
    assert got == status and kind.startswith("application/json")
    decoded = json.loads(body)
    assert decoded["status"] == answer and decoded["results"] == []
    assert decoded["error_message"]


def test_google_answers_a_well_formed_geocode():
    with FakeGeoA() as server:
        query = urllib.parse.urlencode({"address": "Berlin", "key": KEY})
        got, _, body = get(f"{server.url()}/maps/api/geocode/json?{query}")
    assert got == 200 and json.loads(body)["status"] == "OK"


@pytest.mark.parametrize(
    ("path", "query", "headers", "status", "kind"),
    [
        ("/search", {"q": "Berlin", "format": "jsonv2"}, {}, 403, "text/html"),
        ("/search", {"q": "Berlin", "format": "jsonv2"}, {"User-Agent": "x"}, 403, "text/html"),
        ("/search", {"q": "Berlin", "format": "yaml"}, None, 400, "application/json"),
        ("/search", {"q": "Berlin"}, None, 200, "text/xml"),
        ("/search", {"q": " ", "format": "jsonv2"}, None, 400, "application/json"),
        ("/reverse", {"lat": "52.5", "format": "jsonv2"}, None, 400, "application/json"),
        ("/reverse", {"lat": "x", "lon": "13", "format": "jsonv2"}, None, 400, "application/json"),
    ],
    ids=["no-agent", "other-agent", "bad-format", "default-xml", "blank-q", "no-lon", "lat-word"],
)  # fmt: skip
def test_nominatim_refuses_malformed_requests(path, query, headers, status, kind):
    with FakeGeoB(AGENT) as server:
        sent = {"User-Agent": AGENT} if headers is None else headers
        got, answered, body = get(f"{server.url()}{path}?{urllib.parse.urlencode(query)}", sent)
    assert got == status and answered.startswith(kind)
    if kind == "application/json":
        assert json.loads(body)["error"]["message"]


def test_nominatim_json_and_jsonv2_are_both_taken():
    with FakeGeoB(AGENT) as server:
        for form, field in (("json", "class"), ("jsonv2", "category")):
            query = urllib.parse.urlencode({"q": "Paris", "format": form})
            got, _, body = get(f"{server.url()}/search?{query}", {"User-Agent": AGENT})
            assert got == 200 and field in json.loads(body)[0]


def test_the_adapters_send_only_accepted_requests(clock: SleepingClock) -> None:
    """Every call of both adapters passes the strict servers (no 4xx on the wire)."""
    with FakeGeoA() as google, FakeGeoB(AGENT, clock=clock) as osm:
        for block, server in ((geo_a_block(google), google), (geo_b_block(osm), osm)):
            geo, container = open_geo(block)
            with container:
                (berlin,) = geo.geocode("Berlin")
                assert geo.reverse(berlin.lat, berlin.lon).provider_id == berlin.provider_id
                assert geo.geocode("Atlantis") == []
            assert len(server.seen) == 3
            for seen in server.seen:
                assert server.refusal(seen) is None, seen


def test_google_denial_and_invalid_request_reach_the_caller_as_errors() -> None:
    from toolkit_batteries.geo import GeoProviderError

    with FakeGeoA(key="AIza-the-real-one") as server:
        geo, container = open_geo(geo_a_block(server))
        with container, pytest.raises(GeoProviderError) as caught:
            geo.geocode("Berlin")
    assert KEY not in str(caught.value)
    assert server.seen[0].query["key"] == [KEY]
