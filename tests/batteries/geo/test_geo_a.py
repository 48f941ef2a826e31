"""What only ``geo_a`` has: its wire format, its status mapping, its key kept out of sight."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import base_env
from tests.support.leaks import config_show
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError
from toolkit_batteries.geo import GeoProviderError, GeoRateLimitedError

from .conftest import geo_a_block, open_geo
from .servers import KEY, FakeGeoA


@pytest.fixture
def server() -> Any:
    with FakeGeoA() as fake:
        yield fake


def test_geocode_sends_the_documented_request(server: FakeGeoA) -> None:
    geo, container = open_geo(geo_a_block(server))
    with container:
        geo.geocode("Berlin, Germany")
    (seen,) = server.seen
    assert seen.path == "/maps/api/geocode/json"
    assert seen.query == {"address": ["Berlin, Germany"], "key": [KEY]}
    assert seen.headers["accept"] == "application/json"
    assert "authorization" not in seen.headers


def test_reverse_sends_latlng_in_fixed_point(server: FakeGeoA) -> None:
    geo, container = open_geo(geo_a_block(server))
    with container:
        place = geo.reverse(52.52, 0.00001)
    assert place is None
    assert server.seen[0].query == {"latlng": ["52.52,0.00001"], "key": [KEY]}


def test_components_and_kind_come_from_the_answer(server: FakeGeoA) -> None:
    geo, container = open_geo(geo_a_block(server))
    with container:
        (paris,) = geo.geocode("Paris")
    assert paris.kind == "locality"
    assert paris.components == {"locality": "Paris", "country": "France"}
    assert paris.provider_id == "ChIJ-paris"


def test_a_base_url_with_a_path_prefix_is_kept(server: FakeGeoA) -> None:
    block = geo_a_block(server)
    block["options"]["base_url"] = server.url() + "/proxy/"
    geo, container = open_geo(block)
    with container, pytest.raises(GeoProviderError, match="HTTP 404"):
        geo.geocode("Berlin")
    assert server.seen[0].path == "/proxy/maps/api/geocode/json"


def test_api_key_is_required() -> None:
    with pytest.raises(InvalidOptionsError, match=r'geo\.default: option "api_key" is required'):
        open_geo({"adapter": "google", "options": {}})[0]


@pytest.mark.parametrize(
    ("status", "body", "error", "words"),
    [
        (
            200,
            {"status": "REQUEST_DENIED", "error_message": "bad key " + KEY, "results": []},
            GeoProviderError,
            "denied",
        ),
        (200, {"status": "INVALID_REQUEST", "results": []}, GeoProviderError, "invalid"),
        (200, {"status": "OVER_QUERY_LIMIT", "results": []}, GeoRateLimitedError, "quota"),
        (200, {"status": "OVER_DAILY_LIMIT", "results": []}, GeoRateLimitedError, "quota"),
        (429, {"status": "OVER_QUERY_LIMIT"}, GeoRateLimitedError, "quota"),
        (200, {"status": "UNKNOWN_ERROR", "results": []}, ServiceUnavailableError, "retry"),
        (503, {}, ServiceUnavailableError, "retry"),
        (
            200,
            {"status": "OK", "results": [{"formatted_address": "x"}]},
            GeoProviderError,
            "geometry",
        ),
    ],
)
def test_provider_statuses_map_to_the_battery_errors(
    server: FakeGeoA, status: int, body: dict[str, Any], error: type[Exception], words: str
) -> None:
    server.forced = (status, "application/json", json.dumps(body).encode())
    geo, container = open_geo(geo_a_block(server))
    with container, pytest.raises(error, match=words) as caught:
        geo.geocode("Berlin")
    assert "geo.default" in str(caught.value)
    assert KEY not in str(caught.value) and "bad key" not in str(caught.value)


def test_a_body_that_is_not_json_is_refused(server: FakeGeoA) -> None:
    server.forced = (200, "text/html", b"<html>maintenance</html>")
    geo, container = open_geo(geo_a_block(server))
    with container, pytest.raises(ServiceUnavailableError, match="not JSON"):
        geo.geocode("Berlin")


def test_a_body_over_max_response_body_is_refused(server: FakeGeoA) -> None:
    geo, container = open_geo(geo_a_block(server, max_response_body=64))
    with container, pytest.raises(GeoProviderError, match="max_response_body"):
        geo.geocode("Berlin")


def test_an_unreachable_provider_is_unavailable(server: FakeGeoA) -> None:
    block = geo_a_block(server)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        block["options"]["base_url"] = f"http://127.0.0.1:{sock.getsockname()[1]}"
    geo, container = open_geo(block)
    with container, pytest.raises(ServiceUnavailableError, match="could not be reached") as caught:
        geo.geocode("Berlin")
    assert KEY not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_http_is_refused_without_allow_insecure(server: FakeGeoA) -> None:
    with pytest.raises(InvalidOptionsError, match='"base_url" must use https'):
        open_geo(geo_a_block(server, allow_insecure=False))
    assert server.seen == []


def test_a_loopback_literal_is_refused_without_allow_private(server: FakeGeoA) -> None:
    with pytest.raises(InvalidOptionsError, match='"base_url" points at a non-public host'):
        open_geo(geo_a_block(server, allow_private=False))
    assert server.seen == []


def test_a_name_resolving_to_loopback_is_refused_when_connecting(server: FakeGeoA) -> None:
    host = socket.gethostname()
    addresses = {i[4][0] for i in socket.getaddrinfo(host, server.port, type=socket.SOCK_STREAM)}
    assert addresses <= {"127.0.0.1", "127.0.1.1", "::1"}, "the test needs a loopback host name"
    block = geo_a_block(server, allow_private=False)
    block["options"]["base_url"] = server.url(host)
    geo, container = open_geo(block)  # a name passes at open; its addresses are judged later
    with container, pytest.raises(InvalidOptionsError, match="set allow_private") as caught:
        geo.geocode("Berlin")
    assert server.seen == []
    assert host not in str(caught.value) and "127.0.0.1" not in str(caught.value)
    # The same name is reached once allow_private is on.
    block["options"]["allow_private"] = True
    geo, container = open_geo(block)
    with container:
        assert geo.geocode("Berlin")[0].country_code == "DE"


def test_the_key_never_reaches_logs_reprs_or_errors(
    server: FakeGeoA, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, httpx and httpcore included
    geo, container = open_geo(geo_a_block(server))
    with container:
        geo.geocode("Berlin")
        geo.reverse(48.85, 2.32)
        texts = [repr(geo), repr(container), str(container.config.service("geo"))]
        server.forced = (
            200,
            "application/json",
            json.dumps({"status": "REQUEST_DENIED", "error_message": KEY, "results": []}).encode(),
        )
        with pytest.raises(GeoProviderError) as caught:
            geo.geocode("Berlin")
        texts.append(str(caught.value))
        logging.getLogger("toolkit.geo").exception("failure", exc_info=caught.value)
    assert len(server.seen) == 3
    assert all(seen.query["key"] == [KEY] for seen in server.seen)  # it was sent...
    logged = caplog.text + "".join(r.getMessage() for r in caplog.records)
    assert caplog.records, "nothing was logged: the scan would prove nothing"
    assert KEY not in logged  # ...and never shown
    assert all(KEY not in text for text in texts)


def test_config_show_never_prints_the_key(tmp_path: Path) -> None:
    env = base_env(
        GEO__DEFAULT__ADAPTER="geo_a",
        GEO__DEFAULT__API_KEY=KEY,
    )
    text, js, options = config_show("geo", env, tmp_path)
    assert "geo (google)  [GEO__DEFAULT__ADAPTER]" in text.stdout.splitlines()  # product name
    assert options["api_key"] == "[redacted]"
    outputs = [text.stdout, text.stderr, js.stdout, js.stderr]
    for result in outputs:
        assert KEY not in result
