"""Analytics benchmarks: the ``analytics_b`` adapter against the provider SDK, in the same run.

Every side sends the same events to the same local batch server
(``tests.batteries.analytics.server.BatchServer`` on 127.0.0.1, the test suite's
wire-format server, request recording off), 100 events per ``POST /batch/``, no gzip on
either side. The battery goes through ``capture`` (name, identity and property checks,
the JSON-size bound, the bounded buffer; the properties' measured JSON text is what is
queued and sent) and ``flush`` (the guarded session that checks every resolved address);
it runs without its background thread so that the timed loop sends every batch. Two
baselines:

* the SDK's own client (``posthog.Posthog(...).capture`` x100, then ``flush()``), what a
  project calling the SDK directly would run: its consumer thread batches the events;
* the SDK's bare request function (``posthog.request.batch_post``) with batch items the
  loop builds itself, on a plain ``requests.Session``: the floor, with no per-event check
  at all (it does less than the battery must). ``batch_post`` walks the whole body in
  Python for non-finite floats and encodes it with ``ensure_ascii`` and spaced separators
  (about 8% more bytes for the server to read); the battery refuses non-finite floats at
  capture and sends the compact UTF-8 text it measured, so it does neither per batch.

Runs alternate and each side keeps its best. Target: at least 0.9x.
"""

from __future__ import annotations

import secrets as random
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from bench._measure import best_interleaved
from bench.foundation import Result

BATCH = 100
PROPS = {"plan": "pro", "seats": 12, "path": "/pricing", "trial": False}


@contextmanager
def _battery() -> Iterator[tuple[Any, str, str, Callable[[int], None]]]:
    """Yield (server, key, url, the battery's timed loop) on a fresh batch server."""
    from tests.batteries.analytics.server import BatchServer
    from toolkit_batteries.analytics.adapters.posthog import PostHogAnalytics
    from toolkit_batteries.core.config import Config

    key = "phc_" + random.token_urlsafe(24)
    with BatchServer(key, record=False) as server:
        block = {
            "adapter": "analytics_b",
            "options": {
                "api_key": key,
                "endpoint": server.url,
                "allow_insecure": True,  # the bench server is plain http on loopback
                "allow_private": True,
            },
        }
        options = Config.load({"analytics": block}, {}).service("analytics").options
        analytics = PostHogAnalytics(options, batch_size=BATCH, background=False)

        def ours(batches: int) -> None:
            capture, flush = analytics.capture, analytics.flush
            for _ in range(batches):
                for _ in range(BATCH):
                    capture("page_view", PROPS, distinct_id="user-1")
                assert flush() == BATCH

        try:
            yield server, key, server.url, ours
        finally:
            analytics.close()


def _result(name: str, mine: float, theirs: float) -> Result:
    return Result(name, mine, theirs, "events/s", ">= 0.9x", mine >= 0.9 * theirs, number=",.0f")


def bench_vs_sdk_client() -> Result:
    """Time capture x100 + flush against the SDK client's capture x100 + flush."""
    import posthog

    with _battery() as (_, key, url, ours):
        client = posthog.Posthog(key, host=url, flush_at=BATCH, flush_interval=60)

        def base(batches: int) -> None:
            capture = client.capture
            for _ in range(batches):
                for _ in range(BATCH):
                    capture("page_view", distinct_id="user-1", properties=PROPS)
                client.flush()

        try:
            ours(3), base(3)  # connect and warm up both
            mine, theirs = best_interleaved(ours, base, 10, repeats=7, per_unit=BATCH)
        finally:
            client.shutdown()
    return _result("analytics_b capture+flush vs SDK client", mine, theirs)


def bench_vs_bare_request() -> Result:
    """Time capture x100 + flush against 100 hand-built items + bare ``batch_post``."""
    import posthog.request
    import posthog.version
    import requests

    lib = {"$lib": "posthog-python", "$lib_version": posthog.version.VERSION}
    with _battery() as (_, key, url, ours):
        session = requests.Session()
        session.trust_env = False  # like the adapter: no per-request proxy lookup

        def base(batches: int) -> None:
            for _ in range(batches):
                items = [
                    {
                        "event": "page_view",
                        "distinct_id": "user-1",
                        "properties": {**PROPS, **lib},
                        "timestamp": datetime.now(UTC).isoformat(),
                        "uuid": str(uuid.uuid4()),
                    }
                    for _ in range(BATCH)
                ]
                posthog.request.batch_post(
                    key, host=url, session=session, batch=items, historical_migration=False
                )

        try:
            ours(3), base(3)
            mine, theirs = best_interleaved(ours, base, 20, repeats=9, per_unit=BATCH)
        finally:
            session.close()
    return _result("analytics_b capture+flush vs bare SDK batch_post", mine, theirs)


BENCHMARKS = (bench_vs_sdk_client, bench_vs_bare_request)
