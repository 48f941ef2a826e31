"""Queue benchmarks: the kvserver adapter against raw redis-py, the db adapter on PostgreSQL.

* kvserver: push + pop + ack of N messages through the adapter (one Lua script each)
  against raw redis-py doing the equivalent reliable-queue pattern on lists
  (``LPUSH``, ``BRPOPLPUSH`` into a processing list, ``LREM`` to acknowledge), both on
  the same Redis, interleaved. Target: at least 0.7x the raw throughput.
* db on PostgreSQL: 4 threads push N messages one by one, then 4 worker threads pop +
  ack them all (the whole cycle, and the workers alone), then the same with producers
  using ``push_many`` (100 per call). Target: 2000 msg/s. The baseline is the same SQL
  through psycopg with one autocommit connection per thread (no pool, no toolkit
  layers, every commit durable), measured in the same run. A durable push waits for
  the WAL flush, so the push side is bound by the disk's fsync time.

Keys use a unique prefix and tables a unique name; both are deleted afterwards.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from bench.foundation import Result

REDIS_URL = os.environ.get("TOOLKIT_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
POSTGRES_DSN = os.environ.get(
    "TOOLKIT_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
)
BODY = b'{"v":1,"job":"bench.noop","args":[1,2,3],"kwargs":{}}'


def _container(settings: dict):
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    return Container(Config.load(settings, {}))


def _drop_prefix(client, prefix: str) -> None:
    keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
    if keys:
        client.delete(*keys)


# ---------------------------------------------------------------------- kvserver


def _ours_kvserver(queue, n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        queue.push("bench", BODY)
    for _ in range(n):
        queue.ack(queue.pop("bench", timeout=0))
    return n / (time.perf_counter() - started)


def _raw_redis(client, prefix: str, n: int) -> float:
    ready, processing = f"{prefix}raw:ready", f"{prefix}raw:processing"
    started = time.perf_counter()
    for _ in range(n):
        client.lpush(ready, BODY)
    for _ in range(n):
        body = client.brpoplpush(ready, processing, 1)
        client.lrem(processing, 1, body)
    return n / (time.perf_counter() - started)


def bench_kvserver(n: int = 1000, rounds: int = 9) -> Result:
    """Push + pop + ack throughput of the kvserver adapter against raw redis-py lists.

    Short interleaved rounds, median of each side: load that comes and goes during the
    run hits both alike.
    """
    import redis

    url = os.environ.get("TOOLKIT_BENCH_REDIS_URL", REDIS_URL)
    prefix = f"bench-{uuid.uuid4().hex}:"
    container = _container(
        {"queue": {"adapter": "kvserver", "options": {"url": url, "prefix": prefix}}}
    )
    queue = container.queue()
    raw = redis.Redis.from_url(url)
    try:
        _ours_kvserver(queue, 200)  # load the scripts, warm the connections
        _raw_redis(raw, prefix, 200)
        ours, base = [], []
        for _ in range(rounds):
            ours.append(_ours_kvserver(queue, n))
            base.append(_raw_redis(raw, prefix, n))
    finally:
        container.close()
        _drop_prefix(raw, prefix)
        raw.close()
    value, baseline = statistics.median(ours), statistics.median(base)
    return Result(
        "queue kvserver push+pop+ack vs raw redis-py",
        value,
        baseline,
        "msg/s",
        ">= 0.7x raw",
        value >= 0.7 * baseline,
    )


# ---------------------------------------------------------------------- db / PostgreSQL


def _in_threads(threads: int, work: Callable[[int, int], None], total: int) -> float:
    """Run ``work(index, count)`` on ``threads`` threads sharing ``total``; return seconds."""
    shares = [total // threads + (1 if i < total % threads else 0) for i in range(threads)]
    barrier = threading.Barrier(threads + 1)

    def run(index: int) -> None:
        barrier.wait()
        work(index, shares[index])

    with ThreadPoolExecutor(threads) as pool:
        futures = [pool.submit(run, index) for index in range(threads)]
        barrier.wait()
        started = time.perf_counter()
        for future in futures:
            future.result()
    return time.perf_counter() - started


def _push_one_by_one(queue, n: int, threads: int) -> float:
    def push(index: int, count: int) -> None:
        for _ in range(count):
            queue.push("bench", BODY)

    return _in_threads(threads, push, n)


def _push_batches(queue, n: int, threads: int, batch: int = 100) -> float:
    def push(index: int, count: int) -> None:
        for start in range(0, count, batch):
            queue.push_many("bench", [BODY] * min(batch, count - start))

    return _in_threads(threads, push, n)


def _consume(queue, n: int, threads: int) -> float:
    def consume(index: int, count: int) -> None:
        while True:
            message = queue.pop("bench", timeout=0)
            if message is None:
                return
            queue.ack(message)

    return _in_threads(threads, consume, n)


def _raw_db(dsn: str, table: str, n: int, threads: int) -> tuple[float, float]:
    """Return (push seconds, consume seconds) of the same SQL on plain connections."""
    import psycopg

    connections = [psycopg.connect(dsn, autocommit=True) for _ in range(threads)]
    claim = (
        f"UPDATE {table} SET visible_at = %s, attempts = attempts + 1, leased = 1 "
        f"WHERE id = (SELECT id FROM {table} WHERE topic = %s AND dead_at IS NULL "
        "AND visible_at <= %s ORDER BY visible_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) "
        "RETURNING id, body, attempts, enqueued_at"
    )
    insert = (
        f"INSERT INTO {table} (topic, body, attempts, enqueued_at, visible_at, leased) "
        "VALUES (%s, %s, 0, %s, %s, 0) RETURNING id"
    )
    delete = f"DELETE FROM {table} WHERE id = %s AND topic = %s AND attempts = %s"

    def push(index: int, count: int) -> None:
        conn = connections[index]
        for _ in range(count):
            now = time.time()
            conn.execute(insert, ("raw", BODY, now, now)).fetchone()

    def consume(index: int, count: int) -> None:
        conn = connections[index]
        while True:
            now = time.time()
            row = conn.execute(claim, (now + 30, "raw", now)).fetchone()
            if row is None:
                return
            conn.execute(delete, (row[0], "raw", row[2]))

    try:
        return _in_threads(threads, push, n), _in_threads(threads, consume, n)
    finally:
        for conn in connections:
            conn.close()


class _PostgresRun:
    """One measurement on a fresh table: ours (one by one, then batched) and raw psycopg."""

    def __init__(self, n: int = 4000, threads: int = 4) -> None:
        import psycopg

        self.n, self.threads = n, threads
        table = f"bench_queue_{uuid.uuid4().hex[:10]}"
        options = {"dsn": POSTGRES_DSN, "table": table, "dedicated_pool": True}
        container = _container({"queue": {"adapter": "db", "options": options}})
        queue = container.queue()
        try:
            _push_one_by_one(queue, 200, threads)  # warm the pool's connections
            _consume(queue, 200, threads)
            self.push = _push_one_by_one(queue, n, threads)
            self.consume = _consume(queue, n, threads)
            self.push_many = _push_batches(queue, n, threads)
            self.consume_after_many = _consume(queue, n, threads)
            self.raw_push, self.raw_consume = _raw_db(POSTGRES_DSN, table, n, threads)
        finally:
            container.close()
            with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
                conn.execute(f"DROP TABLE IF EXISTS {table}")


_run_cache: list[_PostgresRun] = []


def _postgres() -> _PostgresRun:
    if not _run_cache:
        _run_cache.append(_PostgresRun())
    return _run_cache[0]


def bench_db_postgres_cycle() -> Result:
    """4 threads push N one by one, then 4 worker threads pop + ack them: the whole cycle."""
    run = _postgres()
    ours = run.n / (run.push + run.consume)
    raw = run.n / (run.raw_push + run.raw_consume)
    return Result(
        f"queue db/PostgreSQL push+pop+ack, {run.threads} threads",
        ours,
        raw,
        "msg/s",
        ">= 2000 msg/s",
        ours >= 2000,
    )


def bench_db_postgres_workers() -> Result:
    """4 worker threads pop + ack N waiting messages."""
    run = _postgres()
    ours, raw = run.n / run.consume, run.n / run.raw_consume
    return Result(
        f"queue db/PostgreSQL pop+ack, {run.threads} workers",
        ours,
        raw,
        "msg/s",
        ">= 2000 msg/s",
        ours >= 2000,
    )


def bench_db_postgres_batched() -> Result:
    """push_many (100 per call) from 4 threads, then 4 worker threads pop + ack."""
    run = _postgres()
    ours = run.n / (run.push_many + run.consume_after_many)
    raw = run.n / (run.raw_push + run.raw_consume)
    return Result(
        f"queue db/PostgreSQL push_many(100)+pop+ack, {run.threads} thr",
        ours,
        raw,
        "msg/s",
        ">= 2000 msg/s",
        ours >= 2000,
    )


BENCHMARKS = (
    bench_kvserver,
    bench_db_postgres_cycle,
    bench_db_postgres_workers,
    bench_db_postgres_batched,
)
