"""Rate limiter benchmarks: decisions per second, memory and kvserver.

* memory: ``MemoryRateLimiter.allow`` over 1000 keys, single thread, against a minimal
  unlocked token bucket (a dict of lists and the same arithmetic, no LRU, no lock, no
  Decision object) measured beside it. Target: at least 200k decisions/s.
* kvserver: ``KVServerRateLimiter.allow`` on the Redis at ``TOOLKIT_BENCH_REDIS_URL``
  (default ``redis://127.0.0.1:6379/15``) against a raw redis-py ``EVALSHA`` of the same
  script with the same arguments. Target: at least 0.8x the raw call. Batches of the two
  alternate, and the best batch of each counts, so load from other processes hits both.

Keys live under a unique prefix and are deleted afterwards.
"""

from __future__ import annotations

import os
import time
import uuid

from bench.foundation import Result

REDIS_URL = os.environ.get("TOOLKIT_BENCH_REDIS_URL", "redis://127.0.0.1:6379/15")


def _rate(fn, keys: list[str], batches: int = 5) -> float:
    """Return the best decisions per second over ``batches`` passes over ``keys``."""
    best = 0.0
    for _ in range(batches):
        started = time.perf_counter()
        for key in keys:
            fn(key)
        best = max(best, len(keys) / (time.perf_counter() - started))
    return best


def bench_memory() -> Result:
    """Time the memory adapter against a bare, unlocked token bucket."""
    from toolkit_batteries.ratelimit.adapters.memory import MemoryRateLimiter
    from toolkit_batteries.ratelimit.base import Limits

    limiter = MemoryRateLimiter(Limits(10.0, 20))
    keys = [f"user:{i % 1000}" for i in range(200_000)]
    buckets: dict[str, list[float]] = {}
    clock = time.monotonic

    def bare(key: str, rate: float = 10.0, burst: float = 20.0) -> bool:
        now = clock()
        bucket = buckets.get(key)
        if bucket is None:
            bucket = buckets[key] = [burst, now]
        tokens = min(burst, bucket[0] + (now - bucket[1]) * rate)
        bucket[1] = now
        if tokens >= 1:
            bucket[0] = tokens - 1
            return True
        bucket[0] = tokens
        return False

    ours = baseline = 0.0
    for _ in range(3):  # interleave so both see the same machine load
        ours = max(ours, _rate(limiter.allow, keys, 1))
        baseline = max(baseline, _rate(bare, keys, 1))
    return Result(
        "ratelimit memory allow (1 thread, 1000 keys)",
        ours,
        baseline,
        "decisions/s",
        ">= 200,000/s",
        ours >= 200_000,
        number=",.0f",
    )


def bench_kvserver() -> Result:
    """Time the kvserver adapter against a raw EVALSHA of the same script."""
    import redis

    from toolkit_batteries.ratelimit.adapters.kvserver import (
        SCRIPT,
        SCRIPT_SHA,
        KVServerRateLimiter,
    )
    from toolkit_batteries.ratelimit.base import Limits

    client = redis.Redis.from_url(REDIS_URL)
    prefix = f"bench-{uuid.uuid4().hex}:"
    limiter = KVServerRateLimiter(client, Limits(10.0, 20), prefix=prefix)
    client.script_load(SCRIPT)
    ttl = str(limiter._ttl)
    raw_prefix = f"{prefix}raw:"

    def raw(key: str) -> object:
        return client.evalsha(SCRIPT_SHA, 1, raw_prefix + key, "10.0", "20", 1, ttl, "")

    keys = [f"user:{i % 100}" for i in range(2_000)]
    ours = baseline = 0.0
    try:
        for _ in range(4):
            ours = max(ours, _rate(limiter.allow, keys, 1))
            baseline = max(baseline, _rate(raw, keys, 1))
    finally:
        names = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if names:
            client.delete(*names)
        client.close()
    ratio = ours / baseline
    return Result(
        "ratelimit kvserver allow vs raw EVALSHA",
        ours,
        baseline,
        "decisions/s",
        ">= 0.8x raw",
        ratio >= 0.8,
        number=",.0f",
    )


BENCHMARKS = (bench_memory, bench_kvserver)


if __name__ == "__main__":
    for bench in BENCHMARKS:
        print(bench().line(), flush=True)


def bench_threads_curve() -> object:
    """kvserver ratelimit at 1, 16 and 64 threads vs raw EVALSHA (``bench/_redis_curves.py``)."""
    from bench._redis_curves import curve

    return curve("ratelimit")


BENCHMARKS = (*BENCHMARKS, bench_threads_curve)
