"""The queue's curve: push+pop+ack throughput under a backlog of pending messages.

Why: a queue that is fast when empty can crawl with a million messages waiting (a claim
that scans, a sorted set that grows). At each backlog (default 0 / 1k / 10k pending;
``--scale`` 0 / 100k / 1M) the same topic first gets that many messages (not timed),
then one cycle is timed many times: push one message, pop one (the oldest, so the
backlog stays the same size), ack it.

* kvserver: the adapter on Redis against raw redis-py sending the same server work
  (:class:`bench.queue._RawScripts`: the adapter's push, pop and ack scripts by
  ``EVALSHA``, arguments built inline, a default client), each side on a topic with the
  same backlog; one thread, cycles interleaved in blocks of 50. Each side's rate is
  its median block (a burst of load from other work hits a block, not the line).
  Target 0.8x raw.
* db on PostgreSQL: 4 threads each cycling on the adapter (Django connection per
  thread), against 4 raw psycopg autocommit connections sending the adapter's own
  statements as it sends them (a durable push; claim and ack with
  ``synchronous_commit`` off for the statement). Target 0.95x raw. At the largest backlog
  the claim's inner ``SELECT`` is explained (``EXPLAIN (ANALYZE, BUFFERS)``, rolled
  back) and the line says whether it is an index-only scan, an index scan or a scan of
  the table, and how many buffers it touched.
"""

from __future__ import annotations

import statistics
import time
import uuid
from typing import Any

from bench.queue import (
    BODY,
    REDIS_URL,
    _container,
    _drop_database,
    _migrated_database,
    _RawScripts,
    _Threads,
)

CURVE_BACKLOGS = (0, 1_000, 10_000)
SCALE_BACKLOGS = (0, 100_000, 1_000_000)
#: Cycles timed per side and backlog (default run, ``--scale``).
CYCLES = (600, 4000)
THREADS = 4
#: kvserver cycles per interleaved block (one side runs a block, then the other).
BLOCK = 50


# ---------------------------------------------------------------------- kvserver


def _unlink_prefix(client: Any, prefix: str) -> None:
    """Remove the run's keys with ``UNLINK``: a 1M-member key freed by ``DEL`` blocks
    Redis long enough (seconds on a loaded machine) to time the client out."""
    keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
    if keys:
        client.unlink(*keys)


def _median_block_rate(times: list[float]) -> float:
    """Return cycles per second of the median block of ``BLOCK`` consecutive cycles."""
    sums = [sum(times[i : i + BLOCK]) for i in range(0, len(times) - BLOCK + 1, BLOCK)]
    return BLOCK / statistics.median(sums)


def _kv_fill(queue: Any, backlog: int) -> None:
    """Give the adapter's topic and the raw side's topic ``backlog`` messages each."""
    for start in range(0, backlog, 1000):
        count = min(1000, backlog - start)
        queue.push_many("curve", [BODY] * count)
        queue.push_many("raw", [BODY] * count)  # the key _RawScripts uses


def _kv_cycles(queue: Any, raw: _RawScripts, cycles: int) -> tuple[list, list]:
    mine: list[float] = []
    theirs: list[float] = []
    for block in range(cycles // BLOCK):
        for side in (0, 1) if block % 2 else (1, 0):
            for _ in range(BLOCK):
                began = time.perf_counter()
                if side == 0:
                    queue.push("curve", BODY)
                    queue.ack(queue.pop("curve", timeout=0))
                    mine.append(time.perf_counter() - began)
                else:
                    raw.push()
                    raw.pop_ack()
                    theirs.append(time.perf_counter() - began)
    return mine, theirs


def _kvserver(backlogs: tuple[int, ...], cycles: int) -> tuple[list, list]:
    import redis

    from bench._curves import Line, Point, percentiles

    points, lines = [], []
    for backlog in backlogs:
        prefix = f"bench-curve-{uuid.uuid4().hex}:"
        settings = {"queue": {"adapter": "kvserver", "options": {"url": REDIS_URL}}}
        settings["queue"]["options"]["prefix"] = prefix
        container = _container(settings)
        raw = redis.Redis.from_url(REDIS_URL)
        try:
            queue = container.queue()
            scripts = _RawScripts(raw, prefix)
            _kv_fill(queue, backlog)
            _kv_cycles(queue, scripts, 100)  # warm: scripts loaded, connections open
            mine, theirs = _kv_cycles(queue, scripts, cycles)
        finally:
            container.close()
            _unlink_prefix(raw, prefix)
            raw.close()
        points.append(Point("kvserver toolkit", backlog, *percentiles(mine)))
        points.append(Point("raw redis-py EVALSHA", backlog, *percentiles(theirs)))
        ours, base = _median_block_rate(mine), _median_block_rate(theirs)
        lines.append(
            Line(
                f"queue kvserver cycle, backlog {backlog:,}",
                ours,
                base,
                "msg/s",
                ">= 0.8x raw EVALSHA",
                ours >= 0.8 * base,
            )
        )
    return points, lines


# ---------------------------------------------------------------------- db / PostgreSQL


def _pg_fill(dsn: str, table: str, topics: tuple[str, ...], backlog: int) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        for topic in topics:
            conn.execute(
                f"INSERT INTO {table} (topic, body, attempts, enqueued_at, visible_at, leased) "
                "SELECT %s, %s, 0, extract(epoch FROM now()) - 3600 + g * 1e-6, "
                "extract(epoch FROM now()) - 3600 + g * 1e-6, FALSE "
                "FROM generate_series(1, %s) g",
                (topic, BODY, backlog),
            )
        conn.execute(f"VACUUM ANALYZE {table}")
        # The fill's dirty pages and WAL are written back now, not by a checkpoint that
        # lands in the timed cycles (1M rows are ~0.5 GB of WAL: max_wal_size is 1 GB).
        conn.execute("CHECKPOINT")


def _pg_cycles(pool: _Threads, cycle: Any, total: int) -> tuple[float, list[float]]:
    """Run ``total`` cycles over the pool's threads; return (seconds, per-cycle times)."""
    times: list[list[float]] = [[] for _ in range(pool.threads)]

    def work(index: int, count: int) -> None:
        for _ in range(count):
            began = time.perf_counter()
            cycle(index)
            times[index].append(time.perf_counter() - began)

    seconds = pool.run(work, total)
    return seconds, [t for part in times for t in part]


def _explain(dsn: str, table: str, topic: str) -> tuple[int, str]:
    """Explain the claim's inner SELECT (analyzed, rolled back); return (buffers, verdict)."""
    import psycopg

    sql = (
        f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT id FROM {table} "
        "WHERE topic = %s AND visible_at <= %s ORDER BY visible_at, id LIMIT 1 "
        "FOR UPDATE SKIP LOCKED"
    )
    with psycopg.connect(dsn) as conn:
        (plan,) = conn.execute(sql, (topic, time.time())).fetchone()[0]
        conn.rollback()
    nodes, node = [], plan["Plan"]
    while node is not None:
        nodes.append(node)
        node = (node.get("Plans") or [None])[0]
    kinds = [n["Node Type"] for n in nodes]
    scan = next((n for n in nodes if "Scan" in n["Node Type"]), nodes[-1])
    hits = scan.get("Shared Hit Blocks", 0) + scan.get("Shared Read Blocks", 0)
    verdict = (
        "index-only"
        if scan["Node Type"] == "Index Only Scan"
        else "index scan (heap visited)"
        if scan["Node Type"] == "Index Scan"
        else "NOT indexed"
    )
    return hits, (
        f"{verdict}: {' > '.join(kinds)} on {scan.get('Index Name', scan.get('Relation Name'))},"
        f" {hits} buffers, heap fetches {scan.get('Heap Fetches', 'n/a')},"
        f" {plan['Execution Time']:.2f} ms"
    )


def _postgres(backlogs: tuple[int, ...], cycles: int) -> tuple[list, list, str]:
    import psycopg
    from django.db import connections

    from bench._curves import Line, Point, percentiles

    points, lines, explained = [], [], ""
    dsn = _migrated_database()
    options = {"dsn": dsn, "dedicated_pool": True}
    container = _container({"queue": {"adapter": "db", "options": options}})
    pool = _Threads(THREADS)
    raw: list[Any] = []
    alias = ""
    try:
        queue = container.queue()
        alias = queue.database.alias
        table = queue.table
        raw = [psycopg.connect(dsn, autocommit=True) for _ in range(THREADS)]
        # The adapter's own statements as it sends them outside a transaction: a durable
        # push, claim and ack with synchronous_commit off for that statement.
        sql = queue._sql
        claim, insert, delete = sql["claim"][1], sql["push"][1], sql["ack"][1]

        for backlog in backlogs:
            ours_topic, raw_topic = f"ours{backlog}", f"raw{backlog}"
            _pg_fill(dsn, table, (ours_topic, raw_topic), backlog)

            def ours(index: int, topic: str = ours_topic) -> None:
                queue.push(topic, BODY)
                message = None
                while message is None:  # every other row may be locked by a claim (0 backlog)
                    message = queue.pop(topic, timeout=0)
                queue.ack(message)

            def theirs(index: int, topic: str = raw_topic) -> None:
                conn, now = raw[index], time.time()
                conn.execute(insert, (topic, BODY, now, now)).fetchone()
                row = None
                while row is None:
                    row = conn.execute(claim, (now + 30, topic, time.time())).fetchone()
                conn.execute(delete, (row[0], topic, row[2], time.time()))

            _pg_cycles(pool, ours, 40)  # warm every thread's connection
            _pg_cycles(pool, theirs, 40)
            mine_s, mine = _pg_cycles(pool, ours, cycles)
            theirs_s, base = _pg_cycles(pool, theirs, cycles)
            points.append(
                Point(f"db/PostgreSQL toolkit, {THREADS} threads", backlog, *percentiles(mine))
            )
            points.append(Point(f"raw psycopg, {THREADS} threads", backlog, *percentiles(base)))
            ours_rate, raw_rate = cycles / mine_s, cycles / theirs_s
            lines.append(
                Line(
                    f"queue db/PostgreSQL cycle x{THREADS}, backlog {backlog:,}",
                    ours_rate,
                    raw_rate,
                    "msg/s",
                    ">= 0.95x raw psycopg",
                    ours_rate >= 0.95 * raw_rate,
                )
            )
            if backlog == backlogs[-1]:
                buffers, explained = _explain(dsn, table, ours_topic)
                lines.append(
                    Line(
                        f"queue db claim at backlog {backlog:,}: {explained}",
                        buffers,
                        None,
                        "buffers",
                        "index-only or index scan",
                        not explained.startswith("NOT"),
                    )
                )
    finally:
        pool.close(lambda: connections[alias].close() if alias else None)
        for conn in raw:
            conn.close()
        container.close()
        _drop_database(dsn)
    return points, lines, explained


def curve() -> Any:
    """Run both queue curves, write their sections, return their lines."""
    from bench._curves import Lines, scale_requested, write_section

    scale = scale_requested()
    backlogs = SCALE_BACKLOGS if scale else CURVE_BACKLOGS
    cycles = CYCLES[1] if scale else CYCLES[0]
    mode = "--scale" if scale else "default sizes"
    kv_points, kv_lines = _kvserver(backlogs, cycles)
    write_section(
        "queue_kvserver",
        "queue kvserver: push+pop+ack cycle latency by backlog",
        kv_points,
        f"`python -m bench.run queue` ({mode}). One thread, {cycles} cycles per side in "
        "interleaved blocks of 50 (rate: the median block); the backlog is pushed first "
        "(not timed). *raw*: "
        "redis-py calling `evalsha` with the adapter's own push, pop and ack scripts "
        "(the same server work) on a default client, same Redis, a topic of its own "
        "with the same backlog.",
        xlabel="backlog (pending messages)",
    )
    pg_points, pg_lines, explained = _postgres(backlogs, cycles)
    write_section(
        "queue_db",
        f"queue db on PostgreSQL: push+pop+ack cycle latency by backlog, {THREADS} threads",
        pg_points,
        f"`python -m bench.run queue` ({mode}). {THREADS} threads, {cycles} cycles per "
        "side; the backlog is inserted with one `INSERT ... SELECT generate_series` per "
        "topic, then `VACUUM ANALYZE` and `CHECKPOINT` (not timed). *raw*: the adapter's "
        "own push, claim and ack statements on plain autocommit psycopg connections, one "
        "per thread.\n\n"
        f"The claim's inner `SELECT` at the largest backlog: {explained}.",
        xlabel="backlog (pending messages)",
    )
    return Lines(kv_lines + pg_lines)
