"""vectorstore benchmarks: top-10 queries through the ``db`` store against the raw extensions.

50,000 random 384-dimension vectors (numpy, seeded) are stored through the battery
(``upsert`` in batches of 1000) and, in the same process, into the raw extension's own
table; then top-10 cosine queries run alternately on both sides and each keeps its best
round (:func:`bench._measure.best_interleaved`):

* **SQLite**: the store (its exact in-memory copy of the namespace, kept fresh by the
  namespace version, on the read-only sqlean connection) against a raw ``vec0`` virtual
  table's ``WHERE embedding MATCH ? AND k = 10`` KNN query on a plain sqlean connection.
  Also reported: the store's own SQL scan (sqlite-vec's ``vec_distance_cosine`` over the
  model's BLOB column, used for namespaces too big to copy) against the same ``vec0``
  query, and the first query after a one-record upsert (which refreshes the copy);
* **PostgreSQL** (the real server, a database created for the run and dropped after):
  the store (pgvector's ``<=>`` on the model's ``vector`` column, through Django's
  connection) against ``SELECT id FROM t ORDER BY embedding <=> %s::vector LIMIT 10`` on
  a raw psycopg connection to a ``vector(384)`` table.

Neither side has an approximate index, so both are exact. (:func:`curve`, at the end,
adds pgvector's HNSW index on both sides and measures sizes on synthetic clustered data,
with an ``ef_search`` sweep: ``docs/performance.md``; :func:`sqlite_memory` measures the
SQLite reader's memory and p50 at the largest size, copy against SQL scan.)
Target: at least 0.8x the raw query's rate. Recall@10 of each side is measured against
an exact numpy search over the same float32 data (target 1.0 for the store's exact scans;
the raw side's recall is printed with "no target"). A line without a computed target
says "no target" and never "ok".
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from typing import Any

from bench._curves import Line
from bench._measure import best_interleaved
from bench.foundation import Result

POSTGRES_DSN = os.environ.get(
    "TOOLKIT_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
)
COUNT = 50_000
DIMENSION = 384
QUERIES = 10
K = 10
BATCH = 1000


def _data() -> tuple[Any, Any]:
    """Return (vectors, queries) as float32 numpy arrays, reproducible."""
    import numpy as np

    rng = np.random.default_rng(384)
    vectors = rng.standard_normal((COUNT, DIMENSION)).astype(np.float32)
    queries = rng.standard_normal((QUERIES, DIMENSION)).astype(np.float32)
    return vectors, queries


def _exact(vectors: Any, queries: Any) -> list[list[int]]:
    """Return the exact cosine top-K row numbers of each query."""
    import numpy as np

    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    answers = []
    for query in queries:
        scores = unit @ (query / np.linalg.norm(query))
        answers.append([int(i) for i in np.argsort(-scores, kind="stable")[:K]])
    return answers


def _recall(found: list[list[int]], exact: list[list[int]]) -> float:
    """Return the mean share of the exact top-K each answer found."""
    hits = sum(len(set(f) & set(e)) for f, e in zip(found, exact, strict=True))
    return hits / (K * len(exact))


def _fill(store: Any, vectors: Any) -> None:
    """Upsert every vector through the store, ids ``r<row>``."""
    for start in range(0, COUNT, BATCH):
        rows = vectors[start : start + BATCH].tolist()
        store.upsert([(f"r{start + i}", row) for i, row in enumerate(rows)], namespace="bench")


def _open(dsn: str, **options: Any) -> tuple[Any, Any]:
    """Migrate the vectorstore table into ``dsn`` and open a store on it (with ``options``)."""
    from django.core.management import call_command
    from django.db import connections

    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container
    from toolkit_batteries.core.slots import slot_alias
    from toolkit_batteries.db.databases import dsn_entry

    entry = dsn_entry(dsn, None, service="vectorstore", instance="bench")
    alias = slot_alias(connections, entry, preferred="default", prefix="toolkit_db")
    call_command("migrate", "toolkit_vectorstore", database=alias, verbosity=0)
    block = {"adapter": "db", "options": {"dsn": dsn, "dimension": DIMENSION, **options}}
    container = Container(Config.load({"vectorstore": {"bench": block}}, {}))
    return container, container.vectorstore("bench")


def _results(label: str, raw: str, ours: float, base: float, recalls: dict[str, float]) -> list:
    lines = [
        Result(
            f"db {label} top-{K} @{COUNT // 1000}k x {DIMENSION} vs {raw}",
            ours,
            base,
            "q/s",
            ">= 0.8x",
            ours >= 0.8 * base,
        )
    ]
    for side, value in recalls.items():
        if side.startswith("raw"):  # the baseline's own recall: a figure, not our target
            lines.append(Line(f"recall@{K} {side}", value, None, ""))
        else:
            lines.append(
                Result(f"recall@{K} {side}", value, None, "", "1.00 (exact)", value >= 0.999)
            )
    return lines


def bench_sqlite() -> list[Result]:
    """Time store queries on SQLite against a raw sqlite-vec vec0 KNN query."""
    import sqlean
    import sqlite_vec

    from toolkit_batteries.vectorstore.base import Query

    vectors, queries = _data()
    exact = _exact(vectors, queries)
    with tempfile.TemporaryDirectory(prefix="bench-vectorstore-") as folder:
        container, store = _open(os.path.join(folder, "vectors.sqlite3"))
        raw = sqlean.connect(os.path.join(folder, "raw.sqlite3"))
        try:
            _fill(store, vectors)
            raw.enable_load_extension(True)
            sqlite_vec.load(raw)
            raw.execute(
                f"CREATE VIRTUAL TABLE raw USING vec0(embedding float[{DIMENSION}] "
                "distance_metric=cosine)"
            )
            with raw:
                raw.executemany(
                    "INSERT INTO raw (rowid, embedding) VALUES (?, ?)",
                    ((i, row.tobytes()) for i, row in enumerate(vectors)),
                )
            query_list = queries.tolist()
            query_blobs = [query.tobytes() for query in queries]
            knn = f"SELECT rowid FROM raw WHERE embedding MATCH ? AND k = {K} ORDER BY distance"

            def ours(n: int) -> None:
                for i in range(n):
                    store.query(query_list[i % QUERIES], k=K, namespace="bench")

            def base(n: int) -> None:
                for i in range(n):
                    raw.execute(knn, (query_blobs[i % QUERIES],)).fetchall()

            def scan(n: int) -> None:
                for i in range(n):
                    store._scan_sqlite_vec(
                        Query("bench", tuple(query_list[i % QUERIES]), K, "cosine", {})
                    )

            mine, theirs = best_interleaved(ours, base, QUERIES, repeats=3)
            scanned, theirs_again = best_interleaved(scan, base, QUERIES, repeats=2)
            found = [
                [int(m.id[1:]) for m in store.query(q, k=K, namespace="bench")] for q in query_list
            ]
            scan_found = [
                [
                    int(m.id[1:])
                    for m in store._scan_sqlite_vec(Query("bench", tuple(q), K, "cosine", {}))
                ]
                for q in query_list
            ]
            raw_found = [[row[0] for row in raw.execute(knn, (q,)).fetchall()] for q in query_blobs]
            store.upsert([("r0", vectors[0].tolist())], namespace="bench")
            started = time.perf_counter()
            store.query(query_list[0], k=K, namespace="bench")
            reload_ms = (time.perf_counter() - started) * 1000
        finally:
            raw.close()
            container.close()
    recalls = {
        "db sqlite (in-memory copy)": _recall(found, exact),
        "db sqlite (sqlite-vec scan)": _recall(scan_found, exact),
        "raw vec0": _recall(raw_found, exact),
    }
    lines = _results("sqlite", "raw sqlite-vec vec0 KNN", mine, theirs, recalls)
    lines[1:1] = [
        Line(
            f"db sqlite SQL scan top-{K} vs raw sqlite-vec vec0 KNN",
            scanned,
            theirs_again,
            "q/s",
        ),
        Line("db sqlite first query after a 1-record upsert", reload_ms, None, "ms"),
    ]
    return lines


def bench_postgres() -> list[Result]:
    """Time store queries on PostgreSQL against a raw pgvector query on psycopg."""
    import psycopg
    from django.db import connections

    vectors, queries = _data()
    exact = _exact(vectors, queries)
    name = f"bench_vectors_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    dsn = POSTGRES_DSN.rsplit("/", 1)[0] + f"/{name}"
    container = None
    try:
        container, store = _open(dsn)
        assert store.kind == "pgvector", store.kind
        _fill(store, vectors)
        with psycopg.connect(dsn, autocommit=True) as raw:
            raw.execute(f"CREATE TABLE raw (id integer PRIMARY KEY, embedding vector({DIMENSION}))")
            with raw.cursor().copy("COPY raw (id, embedding) FROM STDIN") as copy:
                for i, row in enumerate(vectors.tolist()):
                    copy.write_row((i, _vector_text(row)))
            raw.execute("ANALYZE raw")
            store.database.execute("ANALYZE toolkit_vectorstore_vector")
            query_list = queries.tolist()
            knn = f"SELECT id FROM raw ORDER BY embedding <=> %s::vector LIMIT {K}"

            def ours(n: int) -> None:
                for i in range(n):
                    store.query(query_list[i % QUERIES], k=K, namespace="bench")

            def base(n: int) -> None:
                for i in range(n):
                    raw.execute(knn, (_vector_text(query_list[i % QUERIES]),)).fetchall()

            mine, theirs = best_interleaved(ours, base, QUERIES, repeats=3)
            found = [
                [int(m.id[1:]) for m in store.query(q, k=K, namespace="bench")] for q in query_list
            ]
            raw_found = [
                [row[0] for row in raw.execute(knn, (_vector_text(q),)).fetchall()]
                for q in query_list
            ]
    finally:
        if container is not None:
            container.close()
        for conn in connections.all(initialized_only=True):
            if conn.settings_dict.get("NAME") == name:
                conn.close()
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    recalls = {
        "db postgres (pgvector)": _recall(found, exact),
        "raw pgvector": _recall(raw_found, exact),
    }
    return _results("postgres", "raw pgvector <=>", mine, theirs, recalls)


class _Lines:
    """Adapt a list of results to bench.run's one-``line()`` protocol."""

    def __init__(self, results: list[Result]) -> None:
        self.results = results

    def line(self) -> str:
        return "\n".join(result.line() for result in self.results)


def sqlite() -> _Lines:
    """Run :func:`bench_sqlite` for ``python -m bench.run vectorstore``."""
    return _Lines(bench_sqlite())


def postgres() -> _Lines:
    """Run :func:`bench_postgres` for ``python -m bench.run vectorstore``."""
    return _Lines(bench_postgres())


BENCHMARKS = (sqlite, postgres)


# ---------------------------------------------------------------------- scale curves

#: Sizes of the vectorstore curve (x DIMENSION): the default run, and ``--scale``.
CURVE_SIZES = (10_000, 50_000)
SCALE_SIZES = (10_000, 50_000, 200_000)
CURVE_QUERIES = 20


#: The clustered set's shape: topics, sub-topics per topic, and the noise of each level.
TOPICS, SUBTOPICS, SUBTOPIC_NOISE, POINT_NOISE = 200, 10, 0.06, 0.04
#: ``maintenance_work_mem`` (MiB) of the curve's index builds, both sides.
BUILD_MEMORY = 1024
#: The ``ef_search`` values swept at the largest size.
SWEEP = (40, 100, 200, 400)


def _curve_data(count: int) -> tuple[Any, Any]:
    """Return (vectors, queries): a seeded, synthetic clustered set, unit float32 rows.

    Standard-normal vectors have no structure (every neighbour is nearly as far as any
    other: HNSW's worst case); embeddings of text do. This is a two-level gaussian
    mixture standing in for them: 200 topic directions, 10 sub-topics around each
    (noise 0.06 per component, cosine ~0.65 to the topic), rows around a sub-topic
    (noise 0.04, cosine ~0.8), normalised. Queries are drawn the same way, not taken
    from the stored rows. Rows are in draw order, so each size is a prefix of the next.
    """
    import numpy as np

    rng = np.random.default_rng(27)

    def unit(array: Any) -> Any:
        return (array / np.linalg.norm(array, axis=-1, keepdims=True)).astype(np.float32)

    topics = unit(rng.standard_normal((TOPICS, DIMENSION)))
    centres = np.repeat(topics, SUBTOPICS, axis=0)
    centres = unit(centres + SUBTOPIC_NOISE * rng.standard_normal(centres.shape))

    def draw(n: int) -> Any:
        picked = centres[rng.integers(0, len(centres), n)]
        noise = rng.standard_normal((n, DIMENSION), dtype=np.float32)
        return unit(picked + np.float32(POINT_NOISE) * noise)

    return draw(count), draw(CURVE_QUERIES)


def _timed_pairs(ours: Any, base: Any, count: int, rounds: int = 3) -> tuple[list, list]:
    """Time ``ours(i)`` and ``base(i)`` for each query, alternating who runs first."""
    mine: list[float] = []
    theirs: list[float] = []
    # Warm every query on both sides first: an index built just before (the raw one is
    # built after the toolkit's) is in the buffers, the other partly evicted, and a cold
    # first round measured the cache, not the query (0.53x raw at 50k; 0.73x warm).
    for i in range(count):
        ours(i), base(i)
    for round_ in range(rounds):
        for i in range(count):
            sides = (
                ((base, theirs), (ours, mine))
                if (round_ + i) % 2
                else (
                    (ours, mine),
                    (base, theirs),
                )
            )
            for run, times in sides:
                started = time.perf_counter()
                run(i)
                times.append(time.perf_counter() - started)
    return mine, theirs


def curve() -> Any:
    """pgvector top-10 p50/p99 and recall@10 by size: exact vs HNSW, and index build time."""
    import psycopg
    from django.db import connections

    from bench._curves import Line, Lines, Point, percentiles, scale_requested, write_section
    from toolkit_batteries.vectorstore.options import VectorStoreOptions

    sizes = SCALE_SIZES if scale_requested() else CURVE_SIZES
    vectors, queries = _curve_data(sizes[-1])
    query_list = queries.tolist()
    name = f"bench_vectors_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    dsn = POSTGRES_DSN.rsplit("/", 1)[0] + f"/{name}"
    container = None
    points: list[Point] = []
    lines: list[Line] = []
    sweep: list[dict[str, Any]] = []
    try:
        container, store = _open(dsn, index_build_memory=BUILD_MEMORY)
        assert store.kind == "pgvector", store.kind
        with psycopg.connect(dsn, autocommit=True, prepare_threshold=None) as raw:
            raw.execute(f"CREATE TABLE raw (id integer PRIMARY KEY, embedding vector({DIMENSION}))")
            raw.execute(f"SET maintenance_work_mem = '{BUILD_MEMORY}MB'")
            filled = 0
            for size in sizes:
                # Load without the indexes (each size times its own build).
                raw.execute("DROP INDEX IF EXISTS raw_hnsw")
                raw.execute(f"DROP INDEX IF EXISTS {store.index_name}")
                block = vectors[filled:size]
                for start in range(0, len(block), BATCH):
                    rows = block[start : start + BATCH].tolist()
                    store.upsert(
                        [(f"r{filled + start + i}", row) for i, row in enumerate(rows)],
                        namespace="bench",
                    )
                with raw.cursor().copy("COPY raw (id, embedding) FROM STDIN") as copy:
                    for i, row in enumerate(block.tolist()):
                        copy.write_row((filled + i, _vector_text(row)))
                filled = size
                raw.execute("ANALYZE raw")
                store.database.execute("ANALYZE toolkit_vectorstore_vector")
                exact = _exact_rows(vectors[:size], queries)
                knn = f"SELECT id FROM raw ORDER BY embedding <=> %s::vector LIMIT {K}"

                def ours_exact(i: int) -> Any:
                    return store.query(query_list[i], k=K, namespace="bench", exact=True)

                def ours_hnsw(i: int) -> Any:
                    return store.query(query_list[i], k=K, namespace="bench")

                def base(i: int, knn: str = knn) -> Any:
                    return raw.execute(knn, (_vector_text(query_list[i]),)).fetchall()

                a, b = _timed_pairs(ours_exact, base, CURVE_QUERIES)
                points.append(Point("toolkit exact", size, *percentiles(a)))
                points.append(Point("raw pgvector exact", size, *percentiles(b)))
                lines.append(
                    Line(
                        f"vectors exact p50 @{size // 1000}k x {DIMENSION} (q/s)",
                        1000 / percentiles(a)[0],
                        1000 / percentiles(b)[0],
                        "q/s",
                        ">= 0.8x raw",
                        percentiles(a)[0] <= percentiles(b)[0] / 0.8,
                    )
                )
                started = time.perf_counter()
                store.create_index()
                ours_build = time.perf_counter() - started
                started = time.perf_counter()
                raw.execute(
                    "CREATE INDEX raw_hnsw ON raw USING hnsw (embedding vector_cosine_ops) "
                    "WITH (m = 16, ef_construction = 64)"
                )
                raw.execute("ANALYZE raw")
                raw_build = time.perf_counter() - started
                raw.execute(f"SET hnsw.ef_search = {store.ef_search}")
                a, b = _timed_pairs(ours_hnsw, base, CURVE_QUERIES)
                found = [[int(m.id[1:]) for m in ours_hnsw(i)] for i in range(CURVE_QUERIES)]
                raw_found = [[row[0] for row in base(i)] for i in range(CURVE_QUERIES)]
                ours_recall = _recall(found, exact)
                raw_recall = _recall(raw_found, exact)
                p50, p99 = percentiles(a)
                extra = {"recall@10": f"{ours_recall:.3f}", "build s": f"{ours_build:.1f}"}
                label = f"toolkit hnsw (ef_search {store.ef_search})"
                points.append(Point(label, size, p50, p99, extra))
                raw_extra = {"recall@10": f"{raw_recall:.3f}", "build s": f"{raw_build:.1f}"}
                points.append(Point("raw pgvector hnsw", size, *percentiles(b), raw_extra))
                target_200k = size >= 200_000
                lines += [
                    Line(
                        f"vectors hnsw p50 @{size // 1000}k x {DIMENSION} (q/s)",
                        1000 / p50,
                        1000 / percentiles(b)[0],
                        "q/s",
                        ">= 0.8x raw",
                        p50 <= percentiles(b)[0] / 0.8,
                    ),
                    Line(
                        f"vectors hnsw p50 @{size // 1000}k (ms)",
                        p50,
                        None,
                        "ms",
                        "<= 10 ms at 200k" if target_200k else None,
                        p50 <= 10 if target_200k else None,
                    ),
                    Line(f"vectors hnsw p99 @{size // 1000}k (ms)", p99, percentiles(b)[1], "ms"),
                    Line(
                        f"vectors hnsw recall@{K} @{size // 1000}k",
                        ours_recall,
                        raw_recall,
                        "",
                        ">= 0.95",
                        ours_recall >= 0.95,
                    ),
                    Line(f"vectors hnsw build @{size // 1000}k (s)", ours_build, raw_build, "s"),
                ]
                if size == sizes[-1]:
                    sweep = _sweep(store, raw, knn, query_list, exact)
                    lines += [line for row in sweep for line in row.pop("lines")]
                raw.execute("RESET hnsw.ef_search")
    finally:
        if container is not None:
            container.close()
        for conn in connections.all(initialized_only=True):
            if conn.settings_dict.get("NAME") == name:
                conn.close()
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    mode = "--scale" if scale_requested() else "default sizes"
    ef_default = VectorStoreOptions().ef_search
    write_section(
        "vectorstore",
        f"vectorstore on pgvector: top-{K} latency by size ({DIMENSION} dims), exact vs HNSW",
        points,
        f"""`python -m bench.run vectorstore` ({mode}).
Vectors: **synthetic clustered data** standing in for text embeddings (seeded, float32,
unit length, {DIMENSION} dimensions): a two-level gaussian mixture of {TOPICS} topics x
{SUBTOPICS} sub-topics, rows drawn around a sub-topic (`_curve_data` in
`bench/vectorstore.py`); the {CURVE_QUERIES} cosine queries are drawn from the same mixture,
not taken from the stored rows. Three rounds, sides alternating. *toolkit exact*:
`query(exact=True)`; *toolkit hnsw*: `query()` after `create_index()` (HNSW, m 16,
ef_construction 64, `index_build_memory` {BUILD_MEMORY} MiB, ef_search {ef_default} (the
option default) set with
`SET LOCAL` per query, iterative scan). *raw pgvector*: the same `ORDER BY embedding <=> q
LIMIT 10` on a `vector({DIMENSION})` table through raw psycopg, without then with its own
HNSW index (same parameters and `maintenance_work_mem`, `SET hnsw.ef_search` once per
session). Recall@10 is against an exact numpy search of the same float32 data; build
is the index build time in seconds at that size (PostgreSQL's parallel maintenance
workers at their default, 2).

`ef_search` sweep at {sizes[-1]:,} vectors (same queries and rounds; the raw side runs
`SET hnsw.ef_search` to the same value):

{_sweep_table(sweep)}""",
        ["recall@10", "build s"],
    )
    return Lines(lines)


def _sweep(store: Any, raw: Any, knn: str, queries: list, exact: list) -> list[dict[str, Any]]:
    """Time and score ``query(ef_search=n)`` for each n of SWEEP against raw pgvector."""
    from bench._curves import Line, percentiles

    rows: list[dict[str, Any]] = []
    for ef in SWEEP:
        raw.execute(f"SET hnsw.ef_search = {ef}")

        def ours(i: int, ef: int = ef) -> Any:
            return store.query(queries[i], k=K, namespace="bench", ef_search=ef)

        def base(i: int) -> Any:
            return raw.execute(knn, (_vector_text(queries[i]),)).fetchall()

        a, b = _timed_pairs(ours, base, CURVE_QUERIES)
        recall = _recall([[int(m.id[1:]) for m in ours(i)] for i in range(CURVE_QUERIES)], exact)
        raw_recall = _recall([[r[0] for r in base(i)] for i in range(CURVE_QUERIES)], exact)
        p50, p99 = percentiles(a)
        ok = recall >= 0.95 and p50 <= 10
        label = f"vectors hnsw ef_search {ef} p50 ms (recall@{K} {recall:.3f})"
        rows.append(
            {
                "ef": ef,
                "p50": p50,
                "p99": p99,
                "recall": recall,
                "raw_p50": percentiles(b)[0],
                "raw_recall": raw_recall,
                "lines": [
                    Line(label, p50, percentiles(b)[0], "ms", "recall >= 0.95, <= 10 ms", ok)
                ],
            }
        )
    return rows


def _vector_text(floats: list[float]) -> str:
    """Return pgvector's text form of ``floats``: the raw table's rows, and the raw side's
    queries, which start from the same floats the toolkit is given and send the text it
    sends (formatted inside the timed call)."""
    return "[" + ",".join(map(repr, floats)) + "]"


def _sweep_table(rows: list[dict[str, Any]]) -> str:
    """Return the sweep as a markdown table."""
    head = "| ef_search | p50 ms | p99 ms | recall@10 | raw p50 ms | raw recall@10 |\n"
    head += "|---:|---:|---:|---:|---:|---:|\n"
    return head + "\n".join(
        f"| {r['ef']} | {r['p50']:.2f} | {r['p99']:.2f} | {r['recall']:.3f} | "
        f"{r['raw_p50']:.2f} | {r['raw_recall']:.3f} |"
        for r in rows
    )


def _exact_rows(vectors: Any, queries: Any) -> list[list[int]]:
    """Return the exact cosine top-K row numbers of each query over ``vectors``."""
    import numpy as np

    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = (queries / np.linalg.norm(queries, axis=1, keepdims=True)) @ unit.T
    return [[int(i) for i in np.argsort(-row, kind="stable")[:K]] for row in scores]


def _serve(path: str, mode: str, queries: list) -> dict[str, float]:
    """In a fresh process: open the SQLite store at ``path`` and time ``queries``.

    ``mode`` "copy" raises ``MAX_BYTES`` so the namespace is held in memory, "scan"
    sets it to 0 so every query is the SQL scan (what a namespace over the cap gets).
    Returns the peak and the held RSS growth (MB, ``/proc/self/status``) from the open
    store to after the queries, the first query's wall time, the later queries' p50
    and their mean CPU time (ms; the machine is shared, CPU time is steadier).
    """
    import django

    django.setup()
    from bench._curves import percentiles
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container
    from toolkit_batteries.vectorstore.adapters import _memindex

    _memindex.MAX_BYTES = 1 << 30 if mode == "copy" else 0
    block = {"adapter": "db", "options": {"dsn": path, "dimension": DIMENSION}}
    container = Container(Config.load({"vectorstore": {"bench": block}}, {}))
    store = container.vectorstore("bench")
    store.count(namespace="bench")
    before = _memory_kib()["VmRSS"]
    times = []
    for query in queries:
        if len(times) == 1:
            cpu = time.process_time()
        started = time.perf_counter()
        store.query(query, k=K, namespace="bench")
        times.append(time.perf_counter() - started)
    cpu = (time.process_time() - cpu) * 1000 / (len(times) - 1)
    after = _memory_kib()
    container.close()
    first, p50 = times[0] * 1000, percentiles(times[1:])[0]
    return {
        "peak": (after["VmHWM"] - before) / 1024,
        "held": (after["VmRSS"] - before) / 1024,
        "first": first,
        "p50": p50,
        "cpu": cpu,
    }


def _memory_kib() -> dict[str, int]:
    """Return this process's resident (VmRSS) and peak resident (VmHWM) memory, KiB."""
    with open("/proc/self/status") as status:
        rows = [line.split(":", 1) for line in status if line.startswith(("VmRSS", "VmHWM"))]
    return {key: int(value.split()[0]) for key, value in rows}


def sqlite_memory() -> Any:
    """SQLite at the largest curve size: the in-memory copy against the SQL scan."""
    import multiprocessing

    from bench._curves import Line, Lines, scale_requested

    size = (SCALE_SIZES if scale_requested() else CURVE_SIZES)[-1]
    vectors, queries = _curve_data(size)
    lines = []
    with tempfile.TemporaryDirectory(prefix="bench-vectorstore-") as folder:
        path = os.path.join(folder, "vectors.sqlite3")
        container, store = _open(path)
        for start in range(0, size, BATCH):
            rows = vectors[start : start + BATCH].tolist()
            store.upsert([(f"r{start + i}", r) for i, r in enumerate(rows)], namespace="bench")
        container.close()
        held = vectors.nbytes / 2**20
        del vectors
        spawn = multiprocessing.get_context("spawn")
        for mode in ("copy", "scan"):
            with spawn.Pool(1) as pool:
                got = pool.apply(_serve, (path, mode, queries.tolist()))
            label = f"db sqlite {mode} @{size // 1000}k x {DIMENSION} ({held:.0f} MB of vectors)"
            lines += [
                Line(f"{label} peak RSS growth", got["peak"], held, "MB"),
                Line(f"{label} RSS growth held after", got["held"], held, "MB"),
                Line(f"{label} first query", got["first"], None, "ms"),
                Line(f"{label} p50", got["p50"], None, "ms"),
                Line(f"{label} CPU per query", got["cpu"], None, "ms"),
            ]
    return Lines(lines)


BENCHMARKS = (*BENCHMARKS, curve, sqlite_memory)
