"""Outbox benchmark: relay throughput on PostgreSQL with 2 relays, against raw psycopg.

N committed messages wait in ``toolkit_outbox_message`` of a fresh migrated database.

* ours: 2 relay threads (each its own Django connection, as two relay processes would
  have), ``batch_size`` 100, publishing every message's envelope to the ``eventbus``
  battery (memory adapter, one subscriber that counts) and marking them sent; rows/s
  until both relays find the outbox empty.
* raw: 2 threads, each one autocommit psycopg connection, running the same claim
  (``UPDATE ... FROM (SELECT ... FOR UPDATE SKIP LOCKED)``) and the same mark
  (``UPDATE ... SET status = 'sent' ... WHERE id IN (...)``) with the same relaxed
  ``synchronous_commit``, publishing nothing: the floor of the SQL alone.

Rounds alternate raw and ours on freshly seeded rows; each side keeps its best round.
Target: at least 2000 rows/s with 2 relays.
"""

from __future__ import annotations

import os
import threading
import time
import uuid

from bench.foundation import Result

POSTGRES_DSN = os.environ.get(
    "TOOLKIT_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
)
TABLE = "toolkit_outbox_message"
#: The adapter's claim (a MATERIALIZED CTE, taken once); parameters: now, now, batch size,
#: lease end, owner.
_CLAIM = f"""WITH c AS MATERIALIZED (SELECT id FROM {TABLE}
          WHERE status = 'pending' AND available_at <= %s AND locked_until <= %s
          ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED)
    UPDATE {TABLE} AS m
    SET locked_until = %s, locked_by = %s, attempts = m.attempts + 1
    FROM c
    WHERE m.id = c.id
    RETURNING m.id, m.message_id, m.topic, m."key", m.payload, m.headers, m.attempts,
              m.created_at"""


def _migrated_database() -> str:
    from urllib.parse import urlsplit, urlunsplit

    import psycopg
    from django.core.management import call_command
    from django.db import connections

    from toolkit_batteries.core.slots import slot_alias
    from toolkit_batteries.db.databases import postgres_entry

    name = f"bench_outbox_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    dsn = urlunsplit(urlsplit(POSTGRES_DSN)._replace(path=f"/{name}"))
    alias = slot_alias(connections, postgres_entry(dsn), preferred="", prefix="bench_db")
    call_command("migrate", "toolkit_outbox", database=alias, verbosity=0, interactive=False)
    connections[alias].close()
    return dsn


def _drop_database(dsn: str) -> None:
    from urllib.parse import urlsplit

    import psycopg

    name = urlsplit(dsn).path.lstrip("/")
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _seed(dsn: str, n: int) -> None:
    import psycopg

    now = time.time()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DELETE FROM {TABLE}")
        conn.execute(
            f"INSERT INTO {TABLE} (message_id, topic, key, payload, headers, status, attempts, "
            "created_at, available_at, locked_until, locked_by, last_error) "
            "SELECT gen_random_uuid(), 'bench', '', convert_to('{\"order\":' || n || '}', "
            "'UTF8'), '{}'::jsonb, 'pending', 0, %s, %s, 0, '', '' "
            "FROM generate_series(1, %s) AS n",
            (now, now - 1, n),
        )
        conn.execute(f"VACUUM ANALYZE {TABLE}")
        # Write the seed's pages back now, not in a checkpoint landing in a timed relay.
        conn.execute("CHECKPOINT")


def _in_threads(work, threads: int) -> float:
    started = time.perf_counter()
    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return time.perf_counter() - started


def _ours(outbox, threads: int) -> float:
    from django.db import connections

    def work(index: int) -> None:
        try:
            outbox.relay().run(stop_when_empty=True)
        finally:
            connections.close_all()

    return _in_threads(work, threads)


def _raw(dsn: str, threads: int, batch: int = 100) -> float:
    import psycopg

    def work(index: int) -> None:
        owner = f"raw-{index}"
        with psycopg.connect(dsn, autocommit=True) as conn:
            # The relay's claim and mark skip the WAL flush too (a lost one = a redelivery).
            conn.execute("SET synchronous_commit = off")
            while True:
                now = time.time()
                rows = conn.execute(_CLAIM, (now, now, batch, now + 30, owner)).fetchall()
                if not rows:
                    return
                ids = [row[0] for row in rows]
                conn.execute(
                    f"UPDATE {TABLE} SET status = 'sent', sent_at = %s, locked_until = 0, "
                    f"locked_by = '' WHERE status = 'pending' AND id = ANY(%s)",
                    (time.time(), ids),
                )

    return _in_threads(work, threads)


def bench_relay_postgres(n: int = 20000, relays: int = 2, rounds: int = 3) -> Result:
    """2 relays drain N messages (claim, publish to the eventbus, mark) vs raw psycopg."""
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    dsn = _migrated_database()
    settings = {
        "outbox": {
            "adapter": "db",
            "options": {"dsn": dsn, "publisher": "eventbus", "dedicated_pool": True},
        },
        "eventbus": {"adapter": "memory", "options": {"buffer_size": n * 2}},
    }
    container = Container(Config.load(settings, {}))
    best_ours = best_raw = 0.0
    try:
        outbox = container.outbox()
        received = [0]
        container.eventbus().subscribe("bench", lambda event: received.__setitem__(0, 1))
        _seed(dsn, 500)
        _ours(outbox, relays)  # warm: connections, imports
        for _ in range(rounds):
            _seed(dsn, n)
            best_raw = max(best_raw, n / _raw(dsn, relays))
            _seed(dsn, n)
            best_ours = max(best_ours, n / _ours(outbox, relays))
            assert outbox.status().processed == n
    finally:
        container.close()
        _drop_database(dsn)
    return Result(
        f"outbox relay db/PostgreSQL, {relays} relays, batch 100 (eventbus)",
        best_ours,
        best_raw,
        "rows/s",
        ">= 2000 rows/s",
        best_ours >= 2000,
        number=",.0f",
    )


BENCHMARKS = (bench_relay_postgres,)


def bench_pending_curve() -> object:
    """Relay rows/s by pending rows, 2 relays (``bench/_outbox_curve.py``)."""
    from bench._outbox_curve import curve

    return curve()


BENCHMARKS = (*BENCHMARKS, bench_pending_curve)
