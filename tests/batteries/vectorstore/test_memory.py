"""How much of a SQLite namespace the reader holds in memory (issue 27: 200k x 384).

A namespace under ``MAX_BYTES`` is copied once (one float32 matrix filled block by
block from the cursor); one over it is never copied and is answered by the SQL scan.
A copy loaded across several blocks answers like the SQL scan. Memory is measured with
``tracemalloc``, which sees numpy's arrays and the driver's BLOB objects (SQLite's own
page cache is not ours).
"""

from __future__ import annotations

import tracemalloc

import pytest

from toolkit_batteries.vectorstore.adapters import _memindex
from toolkit_batteries.vectorstore.base import Query

from .conftest import delete_rows, random_vectors
from .test_db import open_store


def _peak_bytes(action) -> int:
    """Return the most bytes traced at once while ``action()`` ran."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        action()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_a_copy_loaded_in_blocks_answers_like_the_sql_scan(sqlite_dsn, monkeypatch):
    monkeypatch.setattr(_memindex, "BLOCK_ROWS", 16)
    container, store = open_store(sqlite_dsn)
    try:
        vectors = random_vectors(90)
        # The same vector under ids that land in different blocks: ties across blocks.
        items = [(f"r{i:03d}", v, {"n": i}) for i, v in enumerate(vectors)]
        items += [(f"t{i}", vectors[5], {"tie": i}) for i in range(4)]
        store.upsert(items)
        queries = [*random_vectors(3, seed=4), vectors[5]]
        cases = [(q, m) for q in queries for m in ("cosine", "l2", "ip")]
        copied = [store.query(q, k=6, metric=m) for q, m in cases]
        assert store._index._copies["default"].matrix.shape == (94, 8)
        scanned = [store._scan_sqlite_vec(Query("default", tuple(q), 6, m, {})) for q, m in cases]
        for fast, slow in zip(copied, scanned, strict=True):
            assert [m.id for m in fast] == [m.id for m in slow]
            assert [m.metadata for m in fast] == [m.metadata for m in slow]
            assert [m.distance for m in fast] == pytest.approx(
                [m.distance for m in slow], rel=1e-5, abs=1e-5
            )
        assert {m.id for m in copied[-3]} >= {"r005", "t0", "t1", "t2", "t3"}
    finally:
        delete_rows(store)
        container.close()


def test_a_copy_holds_the_vectors_once_and_over_the_cap_none_is_held(sqlite_dsn, monkeypatch):
    dimension, count = 512, 1000
    container, store = open_store(sqlite_dsn, dimension=dimension)
    try:
        vectors = random_vectors(count, dimension=dimension, seed=3)
        store.upsert([(f"r{i:04d}", v) for i, v in enumerate(vectors)])
        size = count * dimension * 4  # the float32 vectors: 2 MB
        query = vectors[7]
        monkeypatch.setattr(_memindex, "BLOCK_ROWS", 100)  # a block's BLOBs: 0.2 MB

        loading = _peak_bytes(lambda: store.query(query, k=5))
        assert size <= loading < 1.5 * size  # one copy (the old loader held two)
        assert store._index._copies["default"].matrix.nbytes == size

        monkeypatch.setattr(_memindex, "MAX_BYTES", size - 1)
        store._index.clear()
        found: list = []
        scanning = _peak_bytes(lambda: found.extend(store.query(query, k=5)))
        assert scanning < 0.5 * size
        assert store._index._copies == {}
        assert found[0].id == "r0007" and found[0].distance == pytest.approx(0.0, abs=1e-6)
    finally:
        delete_rows(store)
        container.close()
