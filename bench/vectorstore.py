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
adds pgvector's HNSW index on both sides and measures sizes: ``docs/performance.md``.)
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


def _open(dsn: str) -> tuple[Any, Any]:
    """Migrate the vectorstore table into ``dsn`` and open a store on it."""
    from django.core.management import call_command
    from django.db import connections

    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container
    from toolkit_batteries.core.slots import slot_alias
    from toolkit_batteries.db.databases import dsn_entry

    entry = dsn_entry(dsn, None, service="vectorstore", instance="bench")
    alias = slot_alias(connections, entry, preferred="default", prefix="toolkit_db")
    call_command("migrate", "toolkit_vectorstore", database=alias, verbosity=0)
    block = {"adapter": "db", "options": {"dsn": dsn, "dimension": DIMENSION}}
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
                    copy.write_row((i, "[" + ",".join(map(repr, row)) + "]"))
            raw.execute("ANALYZE raw")
            store.database.execute("ANALYZE toolkit_vectorstore_vector")
            query_list = queries.tolist()
            query_texts = ["[" + ",".join(map(repr, q)) + "]" for q in query_list]
            knn = f"SELECT id FROM raw ORDER BY embedding <=> %s::vector LIMIT {K}"

            def ours(n: int) -> None:
                for i in range(n):
                    store.query(query_list[i % QUERIES], k=K, namespace="bench")

            def base(n: int) -> None:
                for i in range(n):
                    raw.execute(knn, (query_texts[i % QUERIES],)).fetchall()

            mine, theirs = best_interleaved(ours, base, QUERIES, repeats=3)
            found = [
                [int(m.id[1:]) for m in store.query(q, k=K, namespace="bench")] for q in query_list
            ]
            raw_found = [[row[0] for row in raw.execute(knn, (q,)).fetchall()] for q in query_texts]
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


def _curve_data(count: int) -> tuple[Any, Any]:
    """Return (vectors, queries): float32, seeded, ``count`` x DIMENSION."""
    import numpy as np

    rng = np.random.default_rng(27)
    vectors = rng.standard_normal((count, DIMENSION)).astype(np.float32)
    queries = rng.standard_normal((CURVE_QUERIES, DIMENSION)).astype(np.float32)
    return vectors, queries


def _timed_pairs(ours: Any, base: Any, count: int, rounds: int = 3) -> tuple[list, list]:
    """Time ``ours(i)`` and ``base(i)`` for each query, alternating who runs first."""
    mine: list[float] = []
    theirs: list[float] = []
    ours(0), base(0)  # warm
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

    sizes = SCALE_SIZES if scale_requested() else CURVE_SIZES
    vectors, queries = _curve_data(sizes[-1])
    query_list = queries.tolist()
    query_texts = ["[" + ",".join(map(repr, q)) + "]" for q in query_list]
    name = f"bench_vectors_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    dsn = POSTGRES_DSN.rsplit("/", 1)[0] + f"/{name}"
    container = None
    points: list[Point] = []
    lines: list[Line] = []
    try:
        container, store = _open(dsn)
        assert store.kind == "pgvector", store.kind
        with psycopg.connect(dsn, autocommit=True, prepare_threshold=None) as raw:
            raw.execute(f"CREATE TABLE raw (id integer PRIMARY KEY, embedding vector({DIMENSION}))")
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
                        copy.write_row((filled + i, "[" + ",".join(map(repr, row)) + "]"))
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
                    return raw.execute(knn, (query_texts[i],)).fetchall()

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
                points.append(Point("toolkit hnsw (ef_search 100)", size, p50, p99, extra))
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
    write_section(
        "vectorstore",
        f"vectorstore on pgvector: top-{K} latency by size ({DIMENSION} dims), exact vs HNSW",
        points,
        f"""`python -m bench.run vectorstore` ({mode}).
Vectors: standard normal, float32, seeded ({DIMENSION} dimensions); {CURVE_QUERIES} cosine
queries, three rounds, sides alternating. *toolkit exact*: `query(exact=True)`;
*toolkit hnsw*: `query()` after `create_index()` (HNSW, m 16, ef_construction 64,
ef_search 100 set with `SET LOCAL` per query, iterative scan). *raw pgvector*: the same
`ORDER BY embedding <=> q LIMIT 10` on a `vector({DIMENSION})` table through raw psycopg,
without then with its own HNSW index (same parameters, `SET hnsw.ef_search` once per
session). Recall@10 is against an exact numpy search of the same float32 data; build
is the index build time in seconds at that size. Random normal vectors are the hardest
case for HNSW (no clusters): real embeddings reach higher recall at the same
`ef_search`.""",
        ["recall@10", "build s"],
    )
    return Lines(lines)


def _exact_rows(vectors: Any, queries: Any) -> list[list[int]]:
    """Return the exact cosine top-K row numbers of each query over ``vectors``."""
    import numpy as np

    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = (queries / np.linalg.norm(queries, axis=1, keepdims=True)) @ unit.T
    return [[int(i) for i in np.argsort(-row, kind="stable")[:K]] for row in scores]


BENCHMARKS = (*BENCHMARKS, curve)
