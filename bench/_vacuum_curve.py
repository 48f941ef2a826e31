"""Dead claim-index entries over time, with the server's autovacuum defaults vs HOT_QUEUE.

Why (issue 27): a hot queue table leaves the entries of delivered rows at the head of its
claim index until a vacuum removes them, and PostgreSQL's default trigger (a fifth of
the table) fires late on a big backlog. This drives a table under load for a few
minutes on a server with autovacuum ON and samples, every ``--every`` seconds: the
throughput of the interval, the claim's ``EXPLAIN (ANALYZE, BUFFERS)`` (buffers touched),
and ``pg_stat_user_tables`` (dead rows, autovacuum count). Not a ``bench.run`` group:
the machine's shared server runs with autovacuum off, so it needs a server of its own::

    TOOLKIT_TEST_POSTGRES_DSN=postgresql://postgres@127.0.0.1:5499/test \\
        python -m bench._vacuum_curve queue default --seconds 180 --backlog 1000000

* ``queue``: 2 threads cycling push + pop + ack on the ``db`` queue adapter, on a topic
  holding ``--backlog`` messages (the backlog stays the same size).
* ``outbox``: 2 relays (``run_once``, eventbus publisher, memory adapter) relaying a
  table holding ``--backlog`` pending rows; a producer tops the pending rows up with
  one ``INSERT ... SELECT`` per 500 relayed, so the backlog stays the same size too.

``default`` resets the table's autovacuum parameters (the server's settings apply);
``tuned`` sets :data:`~toolkit_batteries.core.autovacuum.HOT_QUEUE` (what the migrations
set). One JSON object per sample is printed, then one summary.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from typing import Any

import django

QUEUE_TABLE = "toolkit_queue_message"
OUTBOX_TABLE = "toolkit_outbox_message"
THREADS = 2


def _stats(dsn: str, table: str) -> dict[str, Any]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT n_live_tup, n_dead_tup, autovacuum_count, n_tup_upd, n_tup_hot_upd, "
            "n_tup_del, pg_relation_size(relid), pg_indexes_size(relid) "
            "FROM pg_stat_user_tables WHERE relname = %s",
            (table,),
        ).fetchone()
    keys = ("live", "dead", "autovacuums", "upd", "hot_upd", "del", "heap_bytes", "index_bytes")
    return dict(zip(keys, row, strict=True))


#: ``--set name=value`` storage parameters added to the tuned set (to try a variant).
EXTRA: dict[str, str] = {}


def _set_parameters(dsn: str, table: str, mode: str) -> None:
    import psycopg

    from toolkit_batteries.core.autovacuum import HOT_QUEUE, storage_sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(storage_sql(table, HOT_QUEUE, reset=True))
        if mode == "tuned":
            conn.execute(storage_sql(table, {**HOT_QUEUE, **EXTRA}, reset=False))
        (options,) = conn.execute(
            "SELECT reloptions FROM pg_class WHERE relname = %s", (table,)
        ).fetchone()
    print(json.dumps({"table": table, "mode": mode, "reloptions": options}), flush=True)


class _Counter:
    """Operations done by the driver threads, read by the sampler."""

    def __init__(self) -> None:
        self.done = 0
        self.lock = threading.Lock()

    def add(self, n: int) -> None:
        with self.lock:
            self.done += n


def _sample(
    dsn: str, table: str, explain: Any, counter: _Counter, stop: threading.Event, every: float
) -> list[dict[str, Any]]:
    """Sample until ``stop``: print and return one dict per interval."""
    samples: list[dict[str, Any]] = []
    started = last_time = time.monotonic()
    last_done = 0
    while not stop.wait(every):
        now, done = time.monotonic(), counter.done
        rate = (done - last_done) / (now - last_time)
        last_time, last_done = now, done
        buffers, plan = explain()
        sample = {"t": round(now - started), "rate": round(rate), "claim_buffers": buffers}
        sample.update(_stats(dsn, table))
        sample["plan"] = plan
        samples.append(sample)
        print(json.dumps(sample), flush=True)
    return samples


def _queue(dsn: str, mode: str, seconds: float, backlog: int, every: float) -> list[dict]:
    from django.db import connections

    from bench._queue_curve import _explain, _pg_fill
    from bench.queue import BODY, _container

    _pg_fill(dsn, QUEUE_TABLE, ("hot",), backlog)
    _set_parameters(dsn, QUEUE_TABLE, mode)
    container = _container({"queue": {"adapter": "db", "options": {"dsn": dsn}}})
    counter, stop = _Counter(), threading.Event()
    try:
        queue = container.queue()

        def work() -> None:
            try:
                while not stop.is_set():
                    queue.push("hot", BODY)
                    message = None
                    while message is None:
                        message = queue.pop("hot", timeout=0)
                    queue.ack(message)
                    counter.add(1)
            finally:
                connections.close_all()

        def explain() -> tuple[int, str]:
            return _explain(dsn, QUEUE_TABLE, "hot")

        return _run(
            work, lambda: _sample(dsn, QUEUE_TABLE, explain, counter, stop, every), stop, seconds
        )
    finally:
        container.close()


def _outbox(dsn: str, mode: str, seconds: float, backlog: int, every: float) -> list[dict]:
    import psycopg
    from django.db import connections

    from bench._outbox_curve import _explain
    from bench.outbox import _seed
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    _seed(dsn, backlog)
    _set_parameters(dsn, OUTBOX_TABLE, mode)
    settings = {
        "outbox": {"adapter": "db", "options": {"dsn": dsn, "publisher": "eventbus"}},
        "eventbus": {"adapter": "memory", "options": {"buffer_size": 1 << 16}},
    }
    container = Container(Config.load(settings, {}))
    counter, stop = _Counter(), threading.Event()
    try:
        outbox = container.outbox()
        container.eventbus().subscribe("bench", lambda event: None)

        def relay() -> None:
            worker = outbox.relay(batch_size=100)
            try:
                while not stop.is_set():
                    counter.add(worker.run_once().sent)
            finally:
                connections.close_all()

        def produce() -> None:
            produced = 0
            with psycopg.connect(dsn, autocommit=True) as conn:
                while not stop.wait(0.05):
                    deficit = counter.done - produced
                    if deficit < 500:
                        continue
                    now = time.time()
                    conn.execute(
                        f"INSERT INTO {OUTBOX_TABLE} (message_id, topic, key, payload, headers, "
                        "status, attempts, created_at, available_at, locked_until, locked_by, "
                        "last_error) SELECT gen_random_uuid(), 'bench', '', "
                        "convert_to('{}', 'UTF8'), '{}'::jsonb, 'pending', 0, %s, %s, 0, '', '' "
                        "FROM generate_series(1, %s)",
                        (now, now - 1, deficit),
                    )
                    produced += deficit

        def explain() -> tuple[int, str]:
            text = _explain(dsn)
            return int(text.split(" buffers")[0].rsplit(" ", 1)[1]), text

        producer = threading.Thread(target=produce)
        producer.start()
        try:
            return _run(
                relay,
                lambda: _sample(dsn, OUTBOX_TABLE, explain, counter, stop, every),
                stop,
                seconds,
            )
        finally:
            producer.join()
    finally:
        container.close()


def _run(work: Any, sampler: Any, stop: threading.Event, seconds: float) -> list[dict]:
    """Run ``work`` on THREADS threads and ``sampler`` here for ``seconds``; return samples."""
    pool = [threading.Thread(target=work) for _ in range(THREADS)]
    for thread in pool:
        thread.start()
    threading.Timer(seconds, stop.set).start()
    try:
        return sampler()
    finally:
        stop.set()
        for thread in pool:
            thread.join()


def main() -> None:
    """Parse the arguments, run one table in one mode, print samples and a summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("table", choices=("queue", "outbox"))
    parser.add_argument("mode", choices=("default", "tuned"))
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--backlog", type=int, default=1_000_000)
    parser.add_argument("--every", type=float, default=10)
    parser.add_argument("--set", action="append", default=[], help="name=value (tuned only)")
    args = parser.parse_args()
    EXTRA.update(item.split("=", 1) for item in args.set)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    django.setup()
    if args.table == "queue":
        from bench.queue import _drop_database, _migrated_database

        run = _queue
    else:
        from bench.outbox import _drop_database, _migrated_database

        run = _outbox
    dsn = _migrated_database()
    try:
        samples = run(dsn, args.mode, args.seconds, args.backlog, args.every)
    finally:
        _drop_database(dsn)
    buffers = [s["claim_buffers"] for s in samples]
    rates = [s["rate"] for s in samples]
    summary = {
        "summary": f"{args.table} {args.mode} backlog {args.backlog}",
        "mean_rate": round(sum(rates) / len(rates)),
        "min_rate": min(rates),
        "claim_buffers_max": max(buffers),
        "claim_buffers_median": sorted(buffers)[len(buffers) // 2],
        "dead_max": max(s["dead"] for s in samples),
        "autovacuums": samples[-1]["autovacuums"],
    }
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
