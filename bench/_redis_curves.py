"""Cache, ratelimit and lock on Redis at 1, 16 and 64 threads, against raw redis-py.

Why: one thread says nothing about a busy server. Each battery is opened the real way
(``Container``; the ``kvserver`` adapters borrow the container's shared client, a
``BlockingConnectionPool`` of ``pool_size`` connections, 10 per core by default) and
driven by T threads at once; the baseline is one raw ``redis.Redis`` (redis-py's
default pool, a connection per concurrent thread, no cap) sending the same commands:

* cache: ``set(key, 64 bytes, 60)`` + ``get(key)`` against ``SET key v EX 60`` +
  ``GET key`` (each thread its own key);
* ratelimit: ``allow(key)`` against ``EVALSHA`` of the adapter's script with the same
  arguments (each thread its own bucket, never empty: rate 1e6/s);
* lock: ``acquire(name)`` + ``release()`` against ``SET name token NX PX`` + ``EVALSHA``
  of the adapter's release script (each thread its own name, so no thread waits on a
  held lock: the cost measured is the round trips and the pool).

Per T: operations/s over all threads (each op is one call of the pair above) and the
per-op p50/p99. Target: at least 0.8x raw at every T (issue 27: does the shared pool
become the knee? A pool smaller than T makes threads queue for a connection).
"""

from __future__ import annotations

import os
import secrets
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

REDIS_URL = os.environ.get("TOOLKIT_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
THREADS = (1, 16, 64)
#: Operations per thread count (default run, ``--scale``), shared by the threads.
OPERATIONS = (1_500, 30_000)


def _drive(threads: int, total: int, make: Callable[[int], Callable[[], Any]]) -> tuple:
    """Run ``total`` ops over ``threads`` threads (``make(i)`` gives thread i's op)."""
    share = max(1, total // threads)
    times: list[list[float]] = [[] for _ in range(threads)]
    ops = [make(i) for i in range(threads)]
    barrier = threading.Barrier(threads + 1)

    def work(index: int) -> None:
        op, mine = ops[index], times[index]
        for _ in range(10):
            op()  # warm: this thread's connection
        barrier.wait()
        for _ in range(share):
            began = time.perf_counter()
            op()
            mine.append(time.perf_counter() - began)

    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in pool:
        thread.join()
    seconds = time.perf_counter() - started
    flat = [t for part in times for t in part]
    return len(flat) / seconds, flat


def _services(prefix: str, pool_size: int = 0, url: str = REDIS_URL) -> tuple[Any, dict]:
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    pool = {"pool_size": pool_size} if pool_size else {}
    settings = {
        "cache": {"adapter": "kvserver", "options": {"url": url, **pool}},
        "ratelimit": {
            "adapter": "kvserver",
            "options": {
                "rate": 1e6,
                "burst": 1000,
                "kvserver": {"addr": url, "prefix": prefix, **pool},
            },
        },
        # The lock has no pool options: it borrows the client the container shares for
        # this server, whose pool the cache's settings size.
        "lock": {"adapter": "kvserver", "options": {"url": url, "prefix": prefix}},
    }
    container = Container(Config.load(settings, {}))
    return container, {
        "cache": container.cache(),
        "ratelimit": container.ratelimit(),
        "lock": container.lock(),
    }


def _pairs(name: str, service: Any, raw: Any, prefix: str) -> tuple:
    """Return (ours(i), raw(i)) op factories for battery ``name``."""
    value, raw_value = "v" * 64, b"v" * 64
    if name == "cache":

        def ours(i: int) -> Callable[[], Any]:
            key = f"curve{i}"
            return lambda: (service.set(key, value, 60), service.get(key))

        def base(i: int) -> Callable[[], Any]:
            key = f"{prefix}raw:cache{i}"
            return lambda: (raw.set(key, raw_value, ex=60), raw.get(key))

        return ours, base
    if name == "ratelimit":
        from toolkit_batteries.ratelimit.adapters.kvserver import SCRIPT_SHA

        args = (*service._args, 1, service._ttl, "")

        def ours(i: int) -> Callable[[], Any]:
            return lambda: service.allow(f"curve{i}")

        def base(i: int) -> Callable[[], Any]:
            key = f"{prefix}raw:rl{i}"
            return lambda: raw.evalsha(SCRIPT_SHA, 1, key, *args)

        return ours, base
    from toolkit_batteries.lock.adapters.kvserver import _RELEASE

    release = raw.register_script(_RELEASE)

    def ours(i: int) -> Callable[[], Any]:
        return lambda: service.acquire(f"curve{i}", ttl=30).release()

    def base(i: int) -> Callable[[], Any]:
        key = f"{prefix}raw:lock{i}"

        def op() -> None:
            token = secrets.token_hex(16)
            raw.set(key, token, nx=True, px=30_000)
            release(keys=[key], args=[token])

        return op

    return ours, base


def curve(name: str) -> Any:
    """Run battery ``name``'s thread curve, write its section, return its lines."""
    import redis

    from bench._curves import Line, Lines, Point, percentiles, scale_requested, write_section
    from toolkit_batteries.core.kvclient import default_pool_size

    total = OPERATIONS[1] if scale_requested() else OPERATIONS[0]
    prefix = f"bench-curve-{uuid.uuid4().hex}:"
    container, services = _services(prefix)
    raw = redis.Redis.from_url(REDIS_URL)
    points, lines = [], []
    try:
        service = services[name]
        ours, base = _pairs(name, service, raw, prefix)
        for threads in THREADS:
            # Raw first at one size, ours first at the next: neither always goes second.
            order = (
                ((ours, "toolkit"), (base, "raw"))
                if threads % 2
                else ((base, "raw"), (ours, "toolkit"))
            )
            rates = {}
            for make, side in order:
                rate, seconds = _drive(threads, total, make)
                rates[side] = rate
                points.append(
                    Point(
                        f"{name} {side}", threads, *percentiles(seconds), {"ops/s": f"{rate:,.0f}"}
                    )
                )
            lines.append(
                Line(
                    f"{name} kvserver at {threads} threads vs raw redis-py",
                    rates["toolkit"],
                    rates["raw"],
                    "ops/s",
                    ">= 0.8x raw",
                    rates["toolkit"] >= 0.8 * rates["raw"],
                )
            )
        # The evidence for the knee: the same calls at the most threads, with a pool as
        # large as the thread count (a container of its own).
        # The process shares one client per server address and the first borrower's
        # pool settings win, so the larger pool is reached by another name of the server.
        other = REDIS_URL.replace("127.0.0.1", "localhost", 1)
        big, big_services = _services(prefix, pool_size=THREADS[-1], url=other)
        try:
            big_ours, _ = _pairs(name, big_services[name], raw, prefix)
            rate, seconds = _drive(THREADS[-1], total, big_ours)
        finally:
            if name == "cache":
                big_services["cache"].clear()
            big.close()
        points.append(
            Point(
                f"{name} toolkit pool_size={THREADS[-1]}",
                THREADS[-1],
                *percentiles(seconds),
                {"ops/s": f"{rate:,.0f}"},
            )
        )
        lines.append(
            Line(
                f"{name} at {THREADS[-1]} threads, pool_size={THREADS[-1]} (default: baseline)",
                rate,
                rates["toolkit"],
                "ops/s",
            )
        )
    finally:
        keys = list(raw.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            raw.delete(*keys)
        if name == "cache":
            services["cache"].clear()
        raw.close()
        container.close()
    mode = "--scale" if scale_requested() else "default sizes"
    write_section(
        f"{name}_threads",
        f"{name} on Redis: per-op latency by threads, toolkit vs raw redis-py",
        points,
        f"`python -m bench.run {name}` ({mode}). Size = threads; {total:,} operations "
        "shared by the threads. The toolkit's shared client pool holds "
        f"{default_pool_size()} connections here (`pool_size` unset: 10 per core; the "
        f"*pool_size={THREADS[-1]}* point sets it to the thread count); raw redis-py "
        "opens one connection per thread. "
        "See `bench/_redis_curves.py` for the commands on each side.",
        columns=["ops/s"],
        xlabel="threads",
    )
    return Lines(lines)
