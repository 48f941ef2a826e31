"""Session benchmarks: Django's session engine over the battery against Django's own engine.

* ``toolkit_batteries.session.engine`` on the ``kvserver`` adapter (the real Redis server,
  database 15, a unique key prefix) against ``django.contrib.sessions.backends.cache`` on
  django-redis's ``RedisCache`` on the same server: one request's work each, a session
  loaded, changed and saved (``load`` + ``save``), plus ``create`` for a new one.
  Target: at least 0.8x Django's cache engine.

Each figure is sessions per second; runs of the two sides are interleaved and the best of
several repeats is kept, so a busy machine slows both alike.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable

from bench._measure import best_interleaved
from bench.foundation import Result

#: The Redis server the benchmark uses (the tests' server and database).
REDIS_URL = os.environ.get("TOOLKIT_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def _request_loop(backend: type) -> Callable[[int], None]:
    """Return a loop doing what a request does to one session: load, change, save."""
    session = backend()
    session["user"] = 7
    session.save()
    key = session.session_key

    def loop(n: int) -> None:
        for i in range(n):
            current = backend(key)
            current["hits"] = i  # loads, then marks modified
            current.save()

    return loop


def bench_kvserver_engine() -> Result:
    """Time the battery's engine on kvserver against Django's cache engine on django-redis."""
    from django.contrib.sessions.backends.cache import SessionStore as DjangoCacheSession
    from django.test import override_settings

    from toolkit_batteries import services
    from toolkit_batteries.session.engine import SessionStore

    prefix = f"bench-{uuid.uuid4().hex[:8]}:"
    toolkit = {
        "session": {
            "adapter": "kvserver",
            "options": {"kvserver": {"addr": REDIS_URL, "prefix": prefix}},
        }
    }
    caches = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "sessions": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": prefix,
        },
    }
    with override_settings(TOOLKIT=toolkit, CACHES=caches, SESSION_CACHE_ALIAS="sessions"):
        try:
            ours, base = _request_loop(SessionStore), _request_loop(DjangoCacheSession)
            ours(100), base(100)  # connect and warm up both
            mine, theirs = best_interleaved(ours, base, 1000, repeats=5)
        finally:
            from django.core.cache import caches as handler

            handler["sessions"].delete_pattern(f"*{prefix}*")
            client = services.session().client
            for found in client.scan_iter(match=f"{prefix}*", count=500):
                client.delete(found)
            services.reset()
    return Result(
        "session engine load+save (kvserver) vs Django cache engine on django-redis",
        mine,
        theirs,
        "sessions/s",
        ">= 0.8x",
        mine >= 0.8 * theirs,
    )


BENCHMARKS = (bench_kvserver_engine,)
