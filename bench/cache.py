"""Cache benchmarks: the adapters against the thing they wrap, measured in the same run.

* ``kvserver`` cache ``set`` + ``get`` against raw redis-py ``SET`` + ``GET`` on a client
  built with the same connection settings (the real Redis server, database 15, a unique
  key prefix deleted afterwards). The cache is the Django-held object
  (``container.cache()`` is ``caches[alias]``), fetched once per loop as a caller would.
  Target: at least 0.85x the raw rate (the cache is django-redis's RedisCache
  subclass on the shared client; ``get_redis_connection`` returns that client).
* ``memory`` cache ``set`` + ``get`` against Django's ``LocMemCache``, for a string and
  for a small dict. Target: at least 1x.

Each figure is operations per second (one ``set`` plus one ``get`` counts as two); runs
of the two sides are interleaved and the best of several repeats is kept, so a busy
machine slows both alike.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable

from bench._measure import best_interleaved
from bench.foundation import Result

#: The Redis server the benchmark uses (the tests' server and database).
REDIS_URL = os.environ.get("TOOLKIT_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def bench_kvserver() -> Result:
    """Time kvserver-cache set+get against raw redis-py SET+GET on identical clients."""
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container
    from toolkit_batteries.core.kvclient import build_kv_client
    from toolkit_batteries.core.pools import resolve_kv_address

    instance = f"bench{uuid.uuid4().hex[:8]}"
    config = Config.load(
        {"cache": {instance: {"adapter": "kvserver", "options": {"url": REDIS_URL}}}}, {}
    )
    container = Container(config)
    cache = container.cache(instance)
    options = config.service("cache", instance).options
    raw = build_kv_client(
        resolve_kv_address("cache", options, url=REDIS_URL), options, service="cache"
    )
    raw_key = f"{cache.namespace}raw"
    value, raw_value = "v" * 64, b"v" * 64

    def ours(pairs: int) -> None:
        set_, get = cache.set, cache.get
        for _ in range(pairs):
            set_("key", value, 60)
            get("key")

    def base(pairs: int) -> None:
        set_, get = raw.set, raw.get
        for _ in range(pairs):
            set_(raw_key, raw_value, ex=60)
            get(raw_key)

    try:
        ours(200), base(200)  # connect and warm up both
        mine, theirs = best_interleaved(ours, base, 2000, repeats=5, per_unit=2)
    finally:
        raw.delete(raw_key)
        cache.clear()
        raw.close()
        container.close()
    return Result(
        "kvserver cache set+get vs raw redis-py",
        mine,
        theirs,
        "ops/s",
        ">= 0.85x",
        mine >= 0.85 * theirs,
    )


def _memory_bench(label: str, value: object) -> Result:
    from django.core.cache.backends.locmem import LocMemCache

    from toolkit_batteries.cache.adapters.memory import MemoryCache

    cache = MemoryCache(f"bench-{uuid.uuid4().hex}", {"OPTIONS": {"MAX_ENTRIES": 1000}})
    django_cache = LocMemCache(f"bench-{uuid.uuid4().hex}", {"OPTIONS": {"MAX_ENTRIES": 1000}})
    keys = [f"key{i}" for i in range(100)]

    def run(target: object) -> Callable[[int], None]:
        set_, get = target.set, target.get  # type: ignore[attr-defined]

        def loop(pairs: int) -> None:
            for i in range(pairs):
                key = keys[i % 100]
                set_(key, value, 300)
                get(key)

        return loop

    ours, base = run(cache), run(django_cache)
    ours(1000), base(1000)
    mine, theirs = best_interleaved(ours, base, 20_000, repeats=5, per_unit=2)
    return Result(
        f"memory cache set+get ({label}) vs LocMemCache",
        mine,
        theirs,
        "ops/s",
        ">= 1x",
        mine >= theirs,
    )


def bench_memory_str() -> Result:
    """Time the memory cache against LocMemCache with a short string value."""
    return _memory_bench("str", "hello world")


def bench_memory_dict() -> Result:
    """Time the memory cache against LocMemCache with a small dict (pickled by both)."""
    return _memory_bench("dict", {"id": 7, "tags": ["a", "b"], "score": 1.5})


BENCHMARKS = (bench_kvserver, bench_memory_str, bench_memory_dict)


def bench_threads_curve() -> object:
    """kvserver cache at 1, 16 and 64 threads vs raw redis-py (``bench/_redis_curves.py``)."""
    from bench._redis_curves import curve

    return curve("cache")


BENCHMARKS = (*BENCHMARKS, bench_threads_curve)
