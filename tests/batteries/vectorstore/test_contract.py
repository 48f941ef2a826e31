"""The vectorstore contract, on every adapter: db on SQLite (sqlite-vec), db on the real
PostgreSQL (pgvector), vecengine (qdrant-client's in-process engine) and vecengine-server
(qdrant-client over REST on the strict Qdrant stand-in of ``qdrant_server.py``).

Answers are checked against an exact search computed here in Python, on the float32
values the backends store.
"""

from __future__ import annotations

import math
import struct

import pytest

from toolkit_batteries.vectorstore import (
    MAX_BATCH,
    DimensionMismatchError,
    InvalidVectorError,
    Record,
    VectorStoreError,
)
from toolkit_batteries.vectorstore.base import distance

from .conftest import DIMENSION, random_vectors


def f32(vector: list[float]) -> tuple[float, ...]:
    """Return ``vector`` rounded to float32, as every backend stores it."""
    return struct.unpack(f"<{len(vector)}f", struct.pack(f"<{len(vector)}f", *vector))


def exact(vectors: dict[str, list[float]], query: list[float], metric: str, k: int) -> list[str]:
    """Return the ids of the exact top ``k`` (the reference answer)."""
    scored = sorted((distance(f32(v), query, metric), key) for key, v in vectors.items())
    return [key for _, key in scored[:k]]


def unit(index: int, scale: float = 1.0) -> list[float]:
    """Return the ``index``-th axis vector times ``scale``."""
    vector = [0.0] * DIMENSION
    vector[index] = scale
    return vector


class TestVectorStoreContract:
    def test_upsert_then_get_returns_vectors_and_metadata(self, opened):
        store = opened.store
        vectors = random_vectors(3)
        written = store.upsert(
            [
                ("a", vectors[0], {"lang": "en", "year": 2020}),
                ("b", vectors[1]),
                Record("c", tuple(vectors[2])),
            ]
        )
        assert written == 3
        found = store.get(["c", "missing", "a"])
        assert [record.id for record in found] == ["c", "a"]
        assert found[1].metadata == {"lang": "en", "year": 2020}
        assert found[0].metadata == {}
        assert found[1].vector == pytest.approx(vectors[0], rel=1e-6, abs=1e-6)
        assert store.count() == 3

    def test_upsert_replaces_a_record_by_id(self, opened):
        store = opened.store
        store.upsert([("a", unit(0), {"v": 1})])
        store.upsert([("a", unit(1), {"v": 2})])
        assert store.count() == 1
        (record,) = store.get(["a"])
        assert record.metadata == {"v": 2}
        assert record.vector == pytest.approx(unit(1))
        assert store.query(unit(1), k=1)[0].id == "a"

    @pytest.mark.parametrize("metric", ["cosine", "l2", "ip"])
    def test_top_k_matches_the_exact_search(self, opened, metric):
        store = opened.store
        vectors = {f"id-{i:03d}": v for i, v in enumerate(random_vectors(300))}
        items = [(key, v, {"n": i}) for i, (key, v) in enumerate(vectors.items())]
        store.upsert(items[:150])
        store.upsert(items[150:])
        for query in random_vectors(5, seed=99):
            matches = store.query(query, k=10, metric=metric)
            assert [m.id for m in matches] == exact(vectors, query, metric, 10)
            for match in matches:
                expected = distance(f32(vectors[match.id]), query, metric)
                assert match.distance == pytest.approx(expected, rel=1e-4, abs=1e-4)
            assert [m.distance for m in matches] == sorted(m.distance for m in matches)
            assert matches[0].metadata == {"n": int(matches[0].id[3:])}

    def test_distances_follow_the_documented_conventions(self, opened):
        store = opened.store
        store.upsert([("x", unit(0, 2.0)), ("y", unit(1, 3.0))])
        cosine = {m.id: m.distance for m in store.query(unit(0), k=2, metric="cosine")}
        assert cosine == pytest.approx({"x": 0.0, "y": 1.0}, abs=1e-6)
        l2 = {m.id: m.distance for m in store.query(unit(0), k=2, metric="l2")}
        assert l2 == pytest.approx({"x": 1.0, "y": math.sqrt(10.0)}, abs=1e-5)
        ip = {m.id: m.distance for m in store.query(unit(1), k=2, metric="ip")}
        assert ip == pytest.approx({"x": 0.0, "y": -3.0}, abs=1e-5)

    def test_k_limits_the_answer(self, opened):
        store = opened.store
        store.upsert([(f"r{i}", v) for i, v in enumerate(random_vectors(20))])
        assert len(store.query(random_vectors(1, seed=3)[0], k=5)) == 5
        assert len(store.query(random_vectors(1, seed=3)[0], k=50)) == 20

    def test_metadata_filters_by_equality(self, opened):
        store = opened.store
        vectors = random_vectors(40)
        items = [
            (
                f"r{i}",
                v,
                {"lang": "en" if i % 2 else "fr", "year": 2000 + i % 4, "draft": i % 5 == 0},
            )
            for i, v in enumerate(vectors)
        ]
        store.upsert(items)
        query = random_vectors(1, seed=5)[0]
        english = store.query(query, k=40, filter={"lang": "en"})
        assert {m.id for m in english} == {f"r{i}" for i in range(40) if i % 2}
        both = store.query(query, k=40, filter={"lang": "en", "year": 2001})
        assert {m.id for m in both} == {f"r{i}" for i in range(40) if i % 2 and i % 4 == 1}
        drafts = store.query(query, k=40, filter={"draft": True})
        assert {m.id for m in drafts} == {f"r{i}" for i in range(40) if i % 5 == 0}
        assert store.query(query, k=40, filter={"lang": "de"}) == []
        assert store.query(query, k=40, filter={"year": "2001"}) == []  # a string is not a number

    def test_filtered_top_k_is_the_exact_answer_among_matching_records(self, opened):
        store = opened.store
        vectors = {f"r{i:02d}": v for i, v in enumerate(random_vectors(60))}
        store.upsert([(key, v, {"even": int(key[1:]) % 2 == 0}) for key, v in vectors.items()])
        query = random_vectors(1, seed=11)[0]
        even = {key: v for key, v in vectors.items() if int(key[1:]) % 2 == 0}
        matches = store.query(query, k=5, metric="l2", filter={"even": True})
        assert [m.id for m in matches] == exact(even, query, "l2", 5)

    def test_namespaces_are_separate(self, opened):
        store = opened.store
        store.upsert([("a", unit(0))], namespace="docs")
        store.upsert([("a", unit(1)), ("b", unit(2))], namespace="images")
        assert store.count(namespace="docs") == 1
        assert store.count(namespace="images") == 2
        assert store.count() == 0
        assert store.query(unit(0), k=5) == []
        assert [m.id for m in store.query(unit(1), k=1, namespace="images")] == ["a"]
        assert store.get(["a"], namespace="docs")[0].vector == pytest.approx(unit(0))
        assert store.namespaces() == ["docs", "images"]
        assert store.drop_namespace("images") == 2
        assert store.namespaces() == ["docs"]
        assert store.count(namespace="docs") == 1

    def test_delete_removes_records_and_counts_what_existed(self, opened):
        store = opened.store
        store.upsert([("a", unit(0)), ("b", unit(1)), ("c", unit(2))])
        assert store.delete(["a", "nope", "c"]) == 2
        assert store.delete(["a"]) == 0
        assert [r.id for r in store.get(["a", "b", "c"])] == ["b"]
        assert [m.id for m in store.query(unit(0), k=10)] == ["b"]
        assert store.delete(["b"], namespace="elsewhere") == 0

    def test_a_zero_vector_is_stored_and_found_by_l2_and_ip(self, opened):
        store = opened.store
        store.upsert([("zero", [0.0] * DIMENSION), ("x", unit(0))])
        assert store.query(unit(0), k=1, metric="l2")[0].id == "x"
        assert {m.id for m in store.query(unit(0, -1.0), k=2, metric="ip")} == {"zero", "x"}
        assert store.query(unit(0, -1.0), k=1, metric="ip")[0].id == "zero"

    # ------------------------------------------------------------------ refusals

    def test_a_wrong_dimension_is_refused_on_write_and_nothing_is_written(self, opened):
        store = opened.store
        good = random_vectors(3)
        with pytest.raises(DimensionMismatchError) as info:
            store.upsert([("a", good[0]), ("b", good[1] + [0.5]), ("c", good[2])])
        assert info.value.code == "dimension_mismatch"
        message = str(info.value)
        assert f"vectorstore.{opened.instance}" in message
        assert "items[1].vector" in message and "9 dimensions" in message
        assert f'"dimension" option is {DIMENSION}' in message
        assert store.count() == 0
        assert store.get(["a", "c"]) == []

    def test_a_wrong_dimension_is_refused_on_query(self, opened):
        store = opened.store
        store.upsert([("a", unit(0))])
        with pytest.raises(DimensionMismatchError, match='"vector" has 3 dimensions'):
            store.query([1.0, 2.0, 3.0])
        with pytest.raises(DimensionMismatchError):
            store.query([])

    @pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
    def test_non_finite_values_are_refused_and_nothing_is_written(self, opened, bad):
        store = opened.store
        vector = unit(0)
        vector[3] = bad
        with pytest.raises(InvalidVectorError, match=r"items\[1\]\.vector.*NaN or infinity"):
            store.upsert([("a", unit(0)), ("b", vector)])
        assert store.count() == 0
        with pytest.raises(InvalidVectorError):
            store.query(vector)

    @pytest.mark.parametrize(
        "bad", [["1"] * DIMENSION, "abcdefgh", [None] * DIMENSION, [True] * DIMENSION]
    )
    def test_non_numeric_vectors_are_refused(self, opened, bad):
        with pytest.raises(InvalidVectorError):
            opened.store.upsert([("a", bad)])
        assert opened.store.count() == 0

    def test_an_empty_batch_is_refused(self, opened):
        with pytest.raises(VectorStoreError, match='"items" is empty'):
            opened.store.upsert([])
        with pytest.raises(VectorStoreError, match='"ids" is empty'):
            opened.store.delete([])

    def test_an_oversize_batch_is_refused_whole(self, opened):
        store = opened.store
        vector = unit(0)
        items = [(f"r{i}", vector) for i in range(MAX_BATCH + 1)]
        with pytest.raises(
            VectorStoreError, match=f"holds {MAX_BATCH + 1} items; the limit is {MAX_BATCH}"
        ):
            store.upsert(items)
        assert store.count() == 0
        assert store.upsert(items[:MAX_BATCH]) == MAX_BATCH
        assert store.count() == MAX_BATCH

    def test_repeated_ids_in_one_batch_are_refused(self, opened):
        with pytest.raises(VectorStoreError, match=r"items\[2\]\.id.*repeats"):
            opened.store.upsert([("a", unit(0)), ("b", unit(1)), ("a", unit(2))])
        assert opened.store.count() == 0

    def test_bad_ids_metadata_and_arguments_are_refused(self, opened):
        store = opened.store
        with pytest.raises(VectorStoreError, match=r"items\[0\]\.id"):
            store.upsert([("", unit(0))])
        with pytest.raises(VectorStoreError, match=r"items\[0\]\.id"):
            store.upsert([("x" * 256, unit(0))])
        with pytest.raises(VectorStoreError, match=r"items\[0\]\.metadata"):
            store.upsert([("a", unit(0), {"when": object()})])
        with pytest.raises(VectorStoreError, match=r"items\[0\]\.metadata"):
            store.upsert([("a", unit(0), ["not", "an", "object"])])
        with pytest.raises(VectorStoreError, match='"metric"'):
            store.query(unit(0), metric="hamming")
        for k in (0, -1, 1001, 2.5, True):
            with pytest.raises(VectorStoreError, match='"k"'):
                store.query(unit(0), k=k)
        with pytest.raises(VectorStoreError, match='"namespace"'):
            store.query(unit(0), namespace="../etc")
        with pytest.raises(VectorStoreError, match='"filter"'):
            store.query(unit(0), filter={"a.b": 1})
        with pytest.raises(VectorStoreError, match=r'"filter\.tags"'):
            store.query(unit(0), filter={"tags": ["x"]})
        with pytest.raises(VectorStoreError, match='"ids"'):
            store.get("a")
        with pytest.raises(InvalidVectorError, match="all zeros"):
            store.query([0.0] * DIMENSION, metric="cosine")
        assert store.count() == 0

    def test_errors_never_echo_ids_or_values(self, opened):
        secret = "patient-4711-ssn"
        with pytest.raises(VectorStoreError) as info:
            opened.store.upsert([(secret, [float("nan")] * DIMENSION, {"ssn": secret})])
        assert secret not in str(info.value)
        assert "nan" not in str(info.value).lower().replace("nan or", "")
