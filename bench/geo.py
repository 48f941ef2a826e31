"""Geo benchmarks: each adapter against the raw library doing the same job, in one run.

* **geo_a**: ``geo.geocode("Berlin")`` (query check, the guarded transport that checks
  every resolved address, the bounded body read, status mapping, ``Place`` building, the
  span hook) against a raw ``httpx.Client.get(url, params=...)`` plus ``.json()`` with
  ``trust_env`` off, on the same local server (``tests.batteries.geo.servers.FakeGeoA``,
  the test suite's wire-format server). Target: at least 0.9x the raw rate.
* **geo_b**: the same for ``/search`` (``FakeGeoB``). The adapter's one-request-per-second
  budget would make this a benchmark of ``sleep``, so here the adapter is built on a
  ``memory`` limiter of unbounded rate: the figure includes taking a token, not waiting.
  Target: at least 0.9x the raw rate.
* **static**: ``geo.geocode`` on a 10,000-place gazetteer (exact index, then a substring
  scan) against a plain list comprehension doing the substring scan. Target: 0.9x.

Runs of the two sides alternate and the best of several repeats is kept
(``bench/_measure.py``).
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path
from typing import Any

from bench._measure import best_interleaved
from bench.foundation import Result

AGENT = "toolkit-bench/1.0 (bench@example.com)"


def _http_pair(variant: str) -> Result:
    import httpx

    from tests.batteries.geo.servers import KEY, FakeGeoA, FakeGeoB
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    server: Any = FakeGeoA() if variant == "geo_a" else FakeGeoB(AGENT)
    with server:
        common = {"allow_insecure": True, "allow_private": True, "timeout": "5s"}
        if variant == "geo_a":
            block = {
                "adapter": "geo_a",
                "options": {"base_url": server.url(), "api_key": KEY, **common},
            }
            url, params, headers = (
                server.url() + "/maps/api/geocode/json",
                {"address": "Berlin", "key": KEY},
                {},
            )
        else:
            block = {
                "adapter": "geo_b",
                "options": {"endpoint": server.url(), "user_agent": AGENT, **common},
            }
            url = server.url() + "/search"
            params = {"q": "Berlin", "format": "jsonv2", "addressdetails": "1", "limit": "10"}
            headers = {"User-Agent": AGENT}
        container = Container(Config.load({"geo": {"default": block}}, {}))
        geo = container.geo()
        if variant == "geo_b":
            from toolkit_batteries.ratelimit.adapters.memory import MemoryRateLimiter
            from toolkit_batteries.ratelimit.base import Limits

            unbounded = MemoryRateLimiter(Limits(1e9, 1_000_000_000))
            geo.budget = dataclasses.replace(geo.budget, limiter=unbounded)
        raw = httpx.Client(trust_env=False, follow_redirects=False, headers=headers)
        assert geo.geocode("Berlin")[0].country_code == "DE"
        assert raw.get(url, params=params).json()

        def ours(calls: int) -> None:
            geocode = geo.geocode
            for _ in range(calls):
                geocode("Berlin")

        def base(calls: int) -> None:
            get = raw.get
            for _ in range(calls):
                get(url, params=params).json()

        try:
            mine, theirs = best_interleaved(ours, base, 300)
        finally:
            raw.close()
            container.close()
        server.seen.clear()
    ratio = mine / theirs
    return Result(
        f"{variant} geocode vs raw httpx GET ({ratio:.2f}x)",
        mine,
        theirs,
        "calls/s",
        ">= 0.9x raw",
        ratio >= 0.9,
        number=",.0f",
    )


def bench_geo_a() -> Result:
    """Time ``geo_a`` geocode against a raw httpx GET on one local server."""
    return _http_pair("geo_a")


def bench_geo_b() -> Result:
    """Time ``geo_b`` geocode (no waiting) against a raw httpx GET on one local server."""
    return _http_pair("geo_b")


def bench_static() -> Result:
    """Time ``static`` geocode on 10,000 places against a plain substring scan."""
    from toolkit_batteries.geo.adapters.static import StaticGeo

    places = [
        {
            "address": f"Street {i}, Town {i % 97}, Country",
            "lat": (i % 180) - 89.5,
            "lon": (i % 360) - 179.5,
        }
        for i in range(10_000)
    ]
    directory = Path(tempfile.mkdtemp(prefix="toolkit-bench-geo-"))
    (directory / "places.json").write_text(json.dumps(places), encoding="utf-8")
    geo = StaticGeo.from_path("places.json", directory)
    rows = [(p["address"].casefold(), p) for p in places]

    def ours(calls: int) -> None:
        for _ in range(calls):
            geo.geocode("Town 42,")

    def base(calls: int) -> None:
        for _ in range(calls):
            [p for text, p in rows if "town 42," in text]

    mine, theirs = best_interleaved(ours, base, 20)
    ratio = mine / theirs
    return Result(
        f"static geocode, 10k places, vs a list scan ({ratio:.2f}x)",
        mine,
        theirs,
        "calls/s",
        ">= 0.9x raw",
        ratio >= 0.9,
        number=",.0f",
    )


BENCHMARKS = (bench_geo_a, bench_geo_b, bench_static)
