"""Issue 23 defect 4: a metadata filter holds whatever the query vector holds.

On the landed code a query component above the float32 maximum (about 3.4e38) passed the
float64 finiteness check, overflowed to infinity, and every distance became infinity: the
value the in-memory index used to mark the rows the filter excluded, so another owner's
rows came back. An upsert with such a value raised a raw ``OverflowError``. Every test
runs on every adapter: SQLite (in-memory index and SQL scan), PostgreSQL with pgvector,
and the vecengine (qdrant's in-process engine).
"""

from __future__ import annotations

import pytest
from django.db import transaction

from tests.batteries.cache.helpers import unique
from tests.batteries.vectorstore.conftest import DIMENSION, opened, store_block  # noqa: F401
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.vectorstore import InvalidVectorError

HUGE = 1e39  # finite as a Python float, infinity as a float32
#: In the float32 range, but any dot product with it overflows float32.
OVERFLOWING = 3.0e38


def rows() -> list[tuple[str, list[float], dict]]:
    """Alice's two rows and Bob's six, Bob's closest to any query direction."""
    alice = [(f"alice-{i}", [0.1 * (i + 1)] * DIMENSION, {"owner": "alice"}) for i in range(2)]
    bob = [(f"bob-{i}", [float(i + 1)] * DIMENSION, {"owner": "bob"}) for i in range(6)]
    return alice + bob


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
@pytest.mark.parametrize("component", [OVERFLOWING, -OVERFLOWING])
def test_an_overflowing_query_never_returns_rows_the_filter_excludes(
    opened,  # noqa: F811
    metric: str,
    component: float,
) -> None:
    store = opened.store
    store.upsert(rows())
    query = [component] * DIMENSION
    found = store.query(query, k=8, metric=metric, filter={"owner": "alice"})
    assert {match.id for match in found} <= {"alice-0", "alice-1"}, [m.id for m in found]
    assert all(match.metadata["owner"] == "alice" for match in found)


@pytest.fixture
def sqlite_store(request: pytest.FixtureRequest):
    """Return a SQLite store (its instance's rows are gone with the test's database file)."""
    instance = unique()
    block = store_block("db-sqlite", request)
    container = Container(Config.load({"vectorstore": {instance: block}}, {}))
    try:
        yield container.vectorstore(instance)
    finally:
        container.close()


def test_the_sqlite_scan_also_keeps_excluded_rows_out(sqlite_store) -> None:
    """Inside a transaction the SQLite store scans in SQL instead of its in-memory copy."""
    store = sqlite_store
    store.upsert(rows())
    with transaction.atomic(using=store.database.alias):
        found = store.query([OVERFLOWING] * DIMENSION, k=8, metric="l2", filter={"owner": "alice"})
    assert {match.id for match in found} <= {"alice-0", "alice-1"}


@pytest.mark.parametrize("value", [HUGE, -HUGE, 3.5e38])
def test_a_component_outside_float32_is_refused_on_write_with_nothing_written(
    opened,  # noqa: F811
    value: float,
) -> None:
    store = opened.store
    bad = [0.5] * DIMENSION
    bad[3] = value
    with pytest.raises(InvalidVectorError) as caught:
        store.upsert([("good", [0.5] * DIMENSION), ("bad", bad)])
    assert "items[1].vector" in str(caught.value) and "float32" in str(caught.value)
    assert str(value) not in str(caught.value)
    assert store.count() == 0 and store.get(["good", "bad"]) == []


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_a_query_component_outside_float32_is_refused(opened, metric: str) -> None:  # noqa: F811
    store = opened.store
    store.upsert(rows())
    with pytest.raises(InvalidVectorError, match="float32"):
        store.query([HUGE] * DIMENSION, k=3, metric=metric, filter={"owner": "alice"})


def test_the_float32_maximum_itself_is_accepted(opened) -> None:  # noqa: F811
    store = opened.store
    edge = [0.0] * DIMENSION
    edge[0] = 3.4028234663852886e38
    assert store.upsert([("edge", edge)]) == 1
    assert store.get(["edge"])[0].vector[0] == pytest.approx(3.4028234663852886e38)
