"""The outbox relay's curve: rows/s and batch latency with N pending rows, 2 relays.

Why: a relay claim ordered by id over a table of a million pending rows is where a
missing or unusable index shows. At each N (default 2k / 20k; ``--scale`` 10k / 100k /
1M) the table is seeded with N pending rows (``bench.outbox._seed``: one
``INSERT ... SELECT``, then ``VACUUM ANALYZE``), and 2 relay threads relay the first
:data:`RELAYED` of them (all of them at the default sizes):

* toolkit: ``outbox.relay()`` (eventbus publisher, memory adapter) calling
  ``run_once()`` until enough rows moved or a batch claims nothing, each batch timed;
* raw: the same claim and mark statements (``bench.outbox._CLAIM``, relaxed commit) on
  2 autocommit psycopg connections, publishing nothing: the floor of the SQL alone.

Sides alternate on freshly seeded rows. Target: at least 5,000 rows/s (issue 27) at
every N, and the rate at the largest N within 0.8x of the smallest (flat). At the
largest N the claim's inner ``SELECT`` is explained (rolled back) before the relays
run and after: sent rows stay in the table, and a claim that walks the primary key in
id order must step over every one of them.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from bench.outbox import _CLAIM, TABLE, _drop_database, _migrated_database, _seed

CURVE_SIZES = (2_000, 20_000)
SCALE_SIZES = (10_000, 100_000, 1_000_000)
RELAYS = 2
BATCH = 100
#: Rows each side relays per size (all of them at the default sizes): at 1M pending a
#: full drain would mostly time the sent rows piling up ahead of the claim (see below).
RELAYED = 20_000


def _threads(work: Any) -> float:
    started = time.perf_counter()
    pool = [threading.Thread(target=work, args=(i,)) for i in range(RELAYS)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return time.perf_counter() - started


def _ours(outbox: Any, batches: list[float], limit: int) -> tuple[float, int]:
    from django.db import connections

    moved = [0] * RELAYS

    def work(index: int) -> None:
        relay = outbox.relay(batch_size=BATCH)
        try:
            while sum(moved) < limit:
                began = time.perf_counter()
                done = relay.run_once()
                if not done.claimed:
                    return
                batches.append(time.perf_counter() - began)
                moved[index] += done.sent
        finally:
            connections.close_all()

    return _threads(work), sum(moved)


def _raw(dsn: str, batches: list[float], limit: int) -> tuple[float, int]:
    import psycopg

    moved = [0] * RELAYS

    def work(index: int) -> None:
        owner = f"raw-{index}"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("SET synchronous_commit = off")
            while sum(moved) < limit:
                began = now = time.time()
                rows = conn.execute(_CLAIM, (now, now, BATCH, now + 30, owner)).fetchall()
                if not rows:
                    return
                conn.execute(
                    f"UPDATE {TABLE} SET status = 'sent', sent_at = %s, locked_until = 0, "
                    "locked_by = '' WHERE status = 'pending' AND id = ANY(%s)",
                    (time.time(), [row[0] for row in rows]),
                )
                batches.append(time.time() - began)
                moved[index] += len(rows)

    return _threads(work), sum(moved)


def _explain(dsn: str) -> str:
    import psycopg

    now = time.time()
    sql = (
        f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT id FROM {TABLE} WHERE status = "
        "'pending' AND available_at <= %s AND locked_until <= %s ORDER BY id LIMIT %s "
        "FOR UPDATE SKIP LOCKED"
    )
    with psycopg.connect(dsn) as conn:
        (plan,) = conn.execute(sql, (now, now, BATCH)).fetchone()[0]
        conn.rollback()
    nodes, node = [], plan["Plan"]
    while node is not None:
        nodes.append(node)
        node = (node.get("Plans") or [None])[0]
    scan = next((n for n in nodes if "Scan" in n["Node Type"]), nodes[-1])
    touched = scan.get("Shared Hit Blocks", 0) + scan.get("Shared Read Blocks", 0)
    return (
        f"{' > '.join(n['Node Type'] for n in nodes)} on "
        f"{scan.get('Index Name', scan.get('Relation Name'))}, {touched} buffers, "
        f"rows removed by filter {scan.get('Rows Removed by Filter', 0)}, "
        f"{plan['Execution Time']:.2f} ms"
    )


def curve() -> Any:
    """Drain N pending rows with 2 relays on both sides; write the section; return lines."""
    from bench._curves import Line, Lines, Point, percentiles, scale_requested, write_section
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    sizes = SCALE_SIZES if scale_requested() else CURVE_SIZES
    dsn = _migrated_database()
    settings = {
        "outbox": {
            "adapter": "db",
            "options": {"dsn": dsn, "publisher": "eventbus", "dedicated_pool": True},
        },
        "eventbus": {"adapter": "memory", "options": {"buffer_size": 1 << 16}},
    }
    container = Container(Config.load(settings, {}))
    points, lines, rates, explained, drained = [], [], {}, "", ""
    try:
        outbox = container.outbox()
        container.eventbus().subscribe("bench", lambda event: None)
        _seed(dsn, 500)
        _ours(outbox, [], 500)  # warm: connections, imports
        for size in sizes:
            _seed(dsn, size)
            if size == sizes[-1]:
                explained = _explain(dsn)
            raw_batches: list[float] = []
            limit = min(size, RELAYED)
            raw_seconds, raw_moved = _raw(dsn, raw_batches, limit)
            if size == sizes[-1]:  # rows sent: what the claim wades through now
                # Twice: the sent rows' entries stay in the index until a vacuum; the first
                # scan may mark them dead, the second shows what they still cost.
                drained = f"{_explain(dsn)}; the next claim: {_explain(dsn)}"
            _seed(dsn, size)
            our_batches: list[float] = []
            our_seconds, our_moved = _ours(outbox, our_batches, limit)
            if min(raw_moved, our_moved) < limit:
                raise RuntimeError(f"relayed {our_moved} / raw {raw_moved} of {limit}")
            ours, raw = our_moved / our_seconds, raw_moved / raw_seconds
            rates[size] = ours
            points.append(
                Point(
                    "toolkit relay (batch)",
                    size,
                    *percentiles(our_batches),
                    {"rows/s": f"{ours:,.0f}"},
                )
            )
            points.append(
                Point(
                    "raw psycopg (batch)",
                    size,
                    *percentiles(raw_batches),
                    {"rows/s": f"{raw:,.0f}"},
                )
            )
            lines.append(
                Line(
                    f"outbox relay x{RELAYS}, {size:,} pending (raw: baseline)",
                    ours,
                    raw,
                    "rows/s",
                    ">= 5000 rows/s",
                    ours >= 5000,
                )
            )
    finally:
        container.close()
        _drop_database(dsn)
    flat = rates[sizes[-1]] / rates[sizes[0]]
    lines.append(
        Line(
            f"outbox relay rate at {sizes[-1]:,} / at {sizes[0]:,} pending",
            flat,
            None,
            "x",
            ">= 0.8x (flat)",
            flat >= 0.8,
        )
    )
    mode = "--scale" if scale_requested() else "default sizes"
    write_section(
        "outbox",
        f"outbox relay on PostgreSQL, {RELAYS} relays: batch latency by pending rows",
        points,
        f"`python -m bench.run outbox` ({mode}). Batches of {BATCH}; p50/p99 are per "
        f"batch (claim, publish, mark); rows/s over the first {RELAYED:,} rows relayed (or "
        "all of them). *raw*: the same claim "
        "and mark on autocommit psycopg, publishing nothing.\n\n"
        f"The claim's inner `SELECT` with {sizes[-1]:,} pending: {explained}; after "
        f"{min(sizes[-1], RELAYED):,} were relayed (sent rows stay in the table): {drained}.",
        columns=["rows/s"],
        xlabel="pending rows",
    )
    return Lines(lines)
