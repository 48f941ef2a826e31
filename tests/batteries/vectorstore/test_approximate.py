"""Approximate search on pgvector: HNSW (default) and IVFFlat indexes, per-query knobs.

A seeded data set of 5,000 vectors x 64 dimensions is loaded once per index kind on the
real PostgreSQL server; ``create_index()`` builds the index and queries go through it
(checked in ``pg_stat_user_indexes``), with recall@10 measured against ``exact=True``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.vectorstore import VectorStoreError

from ...support.libpq_trace import round_trips, sent_messages
from ..cache.helpers import unique
from .conftest import delete_rows

DIMENSION = 64
COUNT = 5000
QUERIES = 40


def _vectors(count: int, seed: int) -> list[list[float]]:
    rng = random.Random(seed)
    return [[rng.gauss(0.0, 1.0) for _ in range(DIMENSION)] for _ in range(count)]


def _open(dsn: str, **options) -> tuple[Container, object]:
    instance = unique()
    block = {"adapter": "db", "options": {"dsn": dsn, "dimension": DIMENSION, **options}}
    container = Container(Config.load({"vectorstore": {instance: block}}, {}))
    return container, container.vectorstore(instance)


def _index_scans(store, name: str) -> int:
    store.database.fetch_value("SELECT pg_stat_force_next_flush()")
    store.database.fetch_value("SELECT pg_stat_clear_snapshot()")
    return int(
        store.database.fetch_value(
            "SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = %s", (name,)
        )
        or 0
    )


@pytest.fixture(scope="module", params=["hnsw", "ivfflat"])
def loaded(request, postgres_dsn, django_db_blocker) -> Iterator[object]:
    """Return a pgvector store holding the seeded data set, its index built (per module)."""
    with django_db_blocker.unblock():
        container, store = _open(postgres_dsn, index=request.param)
        vectors = _vectors(COUNT, seed=11)
        try:
            for start in range(0, COUNT, 1000):
                store.upsert(
                    [(f"v{i:05d}", vectors[i]) for i in range(start, start + 1000)],
                    namespace="docs",
                )
            assert store.create_index() == store.index_name
            yield store
        finally:
            store.database.execute(f"DROP INDEX IF EXISTS {store.index_name}")
            delete_rows(store)
            container.close()


def test_recall_at_10_against_exact_is_at_least_095_through_the_index(loaded):
    """ef_search 100 (not the default 200): at 5,000 rows PostgreSQL plans 200 as a scan."""
    before = _index_scans(loaded, loaded.index_name)
    found = total = 0
    for query in _vectors(QUERIES, seed=99):
        approximate = {m.id for m in loaded.query(query, k=10, namespace="docs", ef_search=100)}
        exact = {m.id for m in loaded.query(query, k=10, namespace="docs", exact=True)}
        assert len(exact) == 10 and len(approximate) == 10
        found += len(approximate & exact)
        total += 10
    assert found / total >= 0.95
    assert _index_scans(loaded, loaded.index_name) >= before + QUERIES


def test_an_approximate_answer_keeps_the_exact_contract(loaded):
    query = _vectors(1, seed=5)[0]
    approximate = loaded.query(query, k=10, namespace="docs", ef_search=200, probes=50)
    exact = loaded.query(query, k=10, namespace="docs", exact=True)
    assert [m.id for m in approximate] == [m.id for m in exact]
    assert [m.distance for m in approximate] == pytest.approx([m.distance for m in exact], abs=1e-5)
    narrowed = loaded.query(query, k=5, namespace="docs", filter={"missing": 1})
    assert narrowed == []


def test_the_knob_is_local_to_the_query(loaded):
    loaded.query(_vectors(1, seed=3)[0], k=10, namespace="docs", ef_search=300, probes=7)
    assert loaded.database.fetch_value("SHOW hnsw.ef_search") == "40"
    assert loaded.database.fetch_value("SHOW ivfflat.probes") == "1"


def _knobs_sent(loaded, **knobs) -> list[str]:
    """Query with ``knobs``; return the Bind lines sent before the one Sync (libpq trace)."""
    sent = sent_messages(
        loaded.database.django_connection,
        lambda: loaded.query(_vectors(1, seed=4)[0], k=10, namespace="docs", **knobs),
    )
    assert round_trips(sent) == 1, sent  # the knobs and the query, then one Sync
    return [line for kind, line in sent if kind == "Bind"]


def test_the_knobs_go_with_the_query_in_one_round_trip(loaded):
    """The knobs' ``set_config(..., true)`` is bound in the query's implicit transaction.

    Everything before one ``Sync`` is one transaction on the server, so the knobs hold
    while the query runs and end with it (``test_the_knob_is_local_to_the_query``;
    ``tests/batteries/db/test_settings_per_query.py`` reads such settings back).
    """
    knob, query = _knobs_sent(loaded, ef_search=300, probes=7)
    value = "'300'" if loaded.index == "hnsw" else "'7'"
    assert value in knob and "'relaxed_order'" in knob
    assert value not in query


def test_a_query_without_knobs_runs_with_the_option_defaults(loaded):
    """ef_search 200 by default: the smallest swept value with recall@10 >= 0.95 at 200k."""
    knob, _query = _knobs_sent(loaded)
    assert ("'200'" if loaded.index == "hnsw" else "'10'") in knob


@pytest.mark.parametrize(
    ("argument", "value"), [("ef_search", 0), ("ef_search", 1001), ("probes", "9"), ("exact", 1)]
)
def test_bad_knobs_are_refused_by_name(postgres_dsn, argument, value):
    container, store = _open(postgres_dsn)
    try:
        with pytest.raises(VectorStoreError, match=argument):
            store.query([0.5] * DIMENSION, **{argument: value})
    finally:
        container.close()


def test_sqlite_has_no_approximate_index(sqlite_dsn):
    container, store = _open(sqlite_dsn)
    try:
        with pytest.raises(VectorStoreError, match="pgvector"):
            store.create_index()
        store.upsert([("a", [1.0] * DIMENSION)])
        assert [m.id for m in store.query([1.0] * DIMENSION, ef_search=10)] == ["a"]
    finally:
        delete_rows(store)
        container.close()


def test_index_build_memory_raises_maintenance_work_mem_for_the_build_only(postgres_dsn):
    """1 MiB is too small for 3,000 x 24 (pgvector says so); 0 keeps the server's setting."""
    dimension = 24
    notices: list[str] = []
    container, store = _open(postgres_dsn, dimension=dimension, index_build_memory=1)
    rng = random.Random(8)
    try:
        for start in range(0, 3000, 1000):
            batch = [[rng.gauss(0.0, 1.0) for _ in range(dimension)] for _ in range(1000)]
            store.upsert([(f"m{start + i}", v) for i, v in enumerate(batch)], namespace="mem")
        raw = store.database.django_connection.connection
        raw.add_notice_handler(lambda notice: notices.append(notice.message_primary))
        server_setting = store.database.fetch_value("SHOW maintenance_work_mem")
        store.create_index()
        assert any("no longer fits into maintenance_work_mem" in n for n in notices), notices
        assert store.database.fetch_value("SHOW maintenance_work_mem") == server_setting
        store.database.execute(f"DROP INDEX {store.index_name}")
        notices.clear()
        store.index_build_memory = 0
        store.create_index()
        assert not any("maintenance_work_mem" in n for n in notices), notices
        assert len(store.query([1.0] * dimension, k=10, namespace="mem")) == 10
    finally:
        store.database.execute(f"DROP INDEX IF EXISTS {store.index_name}")
        delete_rows(store)
        container.close()
