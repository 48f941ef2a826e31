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

Neither side has an approximate index, so both are exact. Target: at least 0.8x the raw
query's rate. Recall@10 of each side is measured against an exact numpy search over the
same float32 data (1.0 expected for exact scans).
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from typing import Any

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
        lines.append(Result(f"recall@{K} {side}", value, None, "", "1.00 (exact)", value >= 0.999))
    return lines


def bench_sqlite() -> list[Result]:
    """Time store queries on SQLite against a raw sqlite-vec vec0 KNN query."""
    import sqlean
    import sqlite_vec

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
                    store._scan_sqlite_vec("bench", tuple(query_list[i % QUERIES]), K, "cosine", {})

            mine, theirs = best_interleaved(ours, base, QUERIES, repeats=3)
            scanned, theirs_again = best_interleaved(scan, base, QUERIES, repeats=2)
            found = [
                [int(m.id[1:]) for m in store.query(q, k=K, namespace="bench")] for q in query_list
            ]
            scan_found = [
                [int(m.id[1:]) for m in store._scan_sqlite_vec("bench", tuple(q), K, "cosine", {})]
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
        Result(
            f"db sqlite SQL scan top-{K} vs raw sqlite-vec vec0 KNN",
            scanned,
            theirs_again,
            "q/s",
            "reported (fallback path)",
            True,
        ),
        Result(
            "db sqlite first query after a 1-record upsert", reload_ms, None, "ms", "reported", True
        ),
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
