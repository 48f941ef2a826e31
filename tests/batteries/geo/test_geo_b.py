"""What only ``geo_b`` has: its wire format, its User-Agent, its one request per second."""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis

from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError
from toolkit_batteries.geo import GeoProviderError, GeoRateLimitedError

from .conftest import AGENT, SleepingClock, geo_b_block, open_geo
from .servers import FakeGeoB

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def server(clock: SleepingClock) -> Any:
    with FakeGeoB(AGENT, clock=clock) as fake:
        yield fake


def test_search_sends_the_documented_request(server: FakeGeoB) -> None:
    geo, container = open_geo(geo_b_block(server))
    with container:
        (berlin,) = geo.geocode("Berlin")
    (seen,) = server.seen
    assert seen.path == "/search"
    assert seen.query == {
        "q": ["Berlin"],
        "format": ["jsonv2"],
        "addressdetails": ["1"],
        "limit": ["10"],
    }
    assert seen.headers["user-agent"] == AGENT
    assert berlin.provider_id == "relation/62422"
    assert berlin.kind == "city"
    assert berlin.components["city"] == "Berlin"


def test_reverse_sends_the_documented_request(server: FakeGeoB) -> None:
    geo, container = open_geo(geo_b_block(server))
    with container:
        place = geo.reverse(48.8589, 2.32)
    assert place is not None and place.country_code == "FR"
    (seen,) = server.seen
    assert seen.path == "/reverse"
    assert seen.query == {
        "lat": ["48.8589"],
        "lon": ["2.32"],
        "format": ["jsonv2"],
        "addressdetails": ["1"],
    }
    assert seen.headers["user-agent"] == AGENT


@pytest.mark.parametrize("agent", ["", "   ", "python-httpx/0.28.1", "app\r\nX-Evil: 1", "ü" * 3])
def test_user_agent_is_required_and_checked(server: FakeGeoB, agent: str) -> None:
    with pytest.raises(InvalidOptionsError, match=r'geo\.default: option "user_agent"') as caught:
        open_geo(geo_b_block(server, user_agent=agent))
    assert "X-Evil" not in str(caught.value)
    assert server.seen == []


def test_one_request_per_second_on_a_fake_clock(server: FakeGeoB, clock: SleepingClock) -> None:
    geo, container = open_geo(geo_b_block(server))
    with container:
        geo.geocode("Berlin")
        geo.reverse(52.52, 13.4)
        geo.geocode("Paris")
    times = [seen.at for seen in server.seen]
    assert len(times) == 3
    assert [round(b - a, 6) for a, b in itertools.pairwise(times)] == [1.0, 1.0]
    assert sum(clock.waits) == pytest.approx(2.0)


def test_instances_on_the_same_host_share_the_budget(server: FakeGeoB) -> None:
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    block = geo_b_block(server)
    with Container(Config.load({"geo": {"default": block, "other": block}}, {})) as container:
        container.geo().geocode("Berlin")
        container.geo("other").geocode("Berlin")
    first, second = (seen.at for seen in server.seen)
    assert second - first == pytest.approx(1.0)


def test_a_call_waits_at_most_timeout_for_its_turn(server: FakeGeoB, clock: SleepingClock) -> None:
    geo, container = open_geo(geo_b_block(server, timeout="500ms"))
    with container:
        geo.geocode("Berlin")
        with pytest.raises(GeoRateLimitedError, match=r"did not free up within 0\.5 s"):
            geo.geocode("Berlin")
        clock.advance(1.0)
        assert geo.geocode("Paris")[0].country_code == "FR"
    assert len(server.seen) == 2


@pytest.mark.parametrize(
    ("status", "error", "words"),
    [
        (429, GeoRateLimitedError, "too many requests"),
        (403, GeoProviderError, "user_agent"),
        (400, GeoProviderError, "HTTP 400"),
        (502, ServiceUnavailableError, "HTTP 502"),
    ],
)
def test_http_errors_map_to_the_battery_errors(
    server: FakeGeoB, status: int, error: type[Exception], words: str
) -> None:
    server.forced = (status, "text/html", b"<html>no</html>")
    geo, container = open_geo(geo_b_block(server))
    with container, pytest.raises(error, match=words):
        geo.geocode("Berlin")


def test_an_answer_of_the_wrong_shape_is_refused(server: FakeGeoB) -> None:
    server.forced = (200, "application/json", json.dumps({"lat": "x"}).encode())
    geo, container = open_geo(geo_b_block(server))
    with container, pytest.raises(GeoProviderError, match="unexpected shape"):
        geo.geocode("Berlin")


def test_private_targets_are_refused_before_any_request(server: FakeGeoB) -> None:
    with pytest.raises(InvalidOptionsError, match='"endpoint" points at a non-public host'):
        open_geo(geo_b_block(server, allow_private=False))
    block = geo_b_block(server, allow_private=False)
    block["options"]["endpoint"] = server.url(socket.gethostname())  # resolves to loopback
    geo, container = open_geo(block)
    with container, pytest.raises(InvalidOptionsError, match='"endpoint" resolves to a private'):
        geo.geocode("Berlin")
    with pytest.raises(InvalidOptionsError, match='"endpoint" must use https'):
        open_geo(geo_b_block(server, allow_insecure=False))
    assert server.seen == []


def test_the_budget_lives_on_the_ratelimit_store_of_the_same_instance(
    redis_url: str, clock: SleepingClock
) -> None:
    prefix = f"geo-test-{uuid.uuid4().hex}:"
    with FakeGeoB(AGENT) as server:
        services = {
            "ratelimit": {
                "maps": {
                    "adapter": "kvserver",
                    "options": {"kvserver": {"addr": redis_url, "prefix": prefix}},
                }
            }
        }
        from toolkit_batteries.core.config import Config
        from toolkit_batteries.core.container import Container

        config = Config.load({"geo": {"maps": geo_b_block(server)}, **services}, {})
        client = redis.Redis.from_url(redis_url)
        try:
            with Container(config) as container:
                container.geo("maps").geocode("Berlin")
                keys = [k.decode() for k in client.keys(prefix + "*")]
                assert keys == [f"{prefix}ratelimit:geo_b:127.0.0.1:{server.port}"]
                opened = container.opened()
                assert opened.index(("ratelimit", "maps")) < opened.index(("geo", "maps"))
        finally:
            for key in client.scan_iter(prefix + "*"):
                client.delete(key)
            client.close()


_CHILD = """
import sys
import django
django.setup()
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
endpoint, agent, redis_url, prefix = sys.argv[1:5]
config = Config.load({
    "geo": {"default": {"adapter": "geo_b", "options": {
        "endpoint": endpoint, "user_agent": agent, "allow_insecure": True,
        "allow_private": True, "timeout": "20s"}}},
    "ratelimit": {"default": {"adapter": "kvserver",
                  "options": {"kvserver": {"addr": redis_url, "prefix": prefix}}}},
}, {})
with Container(config) as container:
    geo = container.geo()
    for _ in range(2):
        assert geo.geocode("Berlin")[0].country_code == "DE"
"""


def test_processes_sharing_a_kvserver_limiter_send_one_request_per_second(
    redis_url: str,
) -> None:
    prefix = f"geo-test-{uuid.uuid4().hex}:"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "PYTHONPATH": str(REPO)}
    with FakeGeoB(AGENT, clock=time.monotonic) as server:
        args = [server.url(), AGENT, redis_url, prefix]
        children = [
            subprocess.Popen(
                [sys.executable, "-c", _CHILD, *args],
                cwd=REPO,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(2)
        ]
        try:
            for child in children:
                _, err = child.communicate(timeout=90)
                assert child.returncode == 0, err.decode()[-2000:]
        finally:
            for child in children:
                if child.poll() is None:
                    child.kill()
            client = redis.Redis.from_url(redis_url)
            for key in client.scan_iter(prefix + "*"):
                client.delete(key)
            client.close()
        times = sorted(seen.at for seen in server.seen)
    assert len(times) == 4
    gaps = [b - a for a, b in itertools.pairwise(times)]
    # The server's clock decides the budget; arrival jitter stays well under 0.2 s.
    assert min(gaps) >= 0.8, gaps
    assert times[-1] - times[0] >= 2.7, gaps
