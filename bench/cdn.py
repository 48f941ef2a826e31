"""CDN benchmark: the ``cdn_a`` adapter against the raw SDK call, in the same run.

Both sides purge one URL per request on the same local purge API
(``tests.batteries.cdn.server.PurgeServer`` on 127.0.0.1, the test suite's wire-format
server, request recording off): the battery through ``container.cdn().purge_urls([url])``
(argument checks, the guarded httpx transport that checks every resolved address, error
mapping), the raw side through the same SDK's ``client.cache.purge(zone_id=, files=)`` on
a plain ``httpx.Client`` with ``trust_env`` off like the adapter's. Runs alternate and each
side keeps its best. Target: at least 0.9x the raw rate.
"""

from __future__ import annotations

import secrets as random

from bench._measure import best_interleaved
from bench.foundation import Result


def bench_cdn_a() -> Result:
    """Time ``purge_urls`` against the raw SDK ``cache.purge`` on one server."""
    import cloudflare
    import httpx

    from tests.batteries.cdn.server import PurgeServer
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    token, zone = "cftok-" + random.token_urlsafe(30), random.token_hex(16)
    url = "https://www.example.org/pricing"
    with PurgeServer(token, zone, record=False) as server:
        block = {
            "adapter": "cdn_a",
            "options": {
                "api_token": token,
                "zone_id": zone,
                "base_url": server.url,
                "allow_insecure": True,  # the bench server is plain http on loopback
                "allow_private": True,
            },
        }
        container = Container(Config.load({"cdn": block}, {}))
        cdn = container.cdn()
        http = httpx.Client(trust_env=False, follow_redirects=False)
        raw = cloudflare.Cloudflare(api_token=token, base_url=server.url, http_client=http)

        def ours(purges: int) -> None:
            purge = cdn.purge_urls
            for _ in range(purges):
                assert purge([url]) == 1

        def base(purges: int) -> None:
            purge = raw.cache.purge
            for _ in range(purges):
                assert purge(zone_id=zone, files=[url]) is not None

        try:
            ours(20), base(20)  # connect and warm up both
            mine, theirs = best_interleaved(ours, base, 300, repeats=9)
        finally:
            http.close()
            container.close()
    return Result(
        "cdn_a purge_urls vs raw SDK cache.purge",
        mine,
        theirs,
        "purges/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
        number=",.0f",
    )


BENCHMARKS = (bench_cdn_a,)
