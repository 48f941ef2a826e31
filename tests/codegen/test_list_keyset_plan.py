"""A generated CRUD list seeks an index for page N: no table scan, no sort (issue 27).

Why: the list pages by keyset on ``(created_at, id)``. Without an index on that order,
and with the keyset written ``created_at > x OR (created_at = x AND id > y)``, SQLite
planned ``SCAN items; USE TEMP B-TREE FOR ORDER BY``: page 1,000 cost more than page 1,
and page 1 grew with the table. The compiled model now declares the index (so its
generated migration creates it) and the filter is the row value ``(created_at, id) >
(x, y)``. The plans are read, not timed: SQLite's ``EXPLAIN QUERY PLAN`` of the query
the served request ran, and PostgreSQL's ``EXPLAIN`` of the same page on the generated
migration applied to the real server.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, connections
from django.test import Client

try:
    from .django_support import served_schema
except ImportError:  # rootdir-relative import mode (tests/codegen is not a package)
    from django_support import served_schema

SCHEMA = """
entity Item {
  id: uuid @primary
  title: string
  created_at: timestamp @default(now())
}

service ItemService {
  rpc ListItems() -> Item { http: GET "/v1/items"; auth: none; paginated: true }
}
"""
ROWS = 3_000
START = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def app(
    tmp_path_factory: pytest.TempPathFactory, django_db_setup: Any, django_db_blocker: Any
) -> Iterator[Any]:
    """Compile SCHEMA (a CRUD list only) into an installed, migrated app."""
    root = tmp_path_factory.mktemp("keyset")
    with served_schema(root, SCHEMA, "ks", django_db_blocker) as built:
        yield built


def _item_model(app: Any) -> Any:
    return __import__(f"{app.module}.models", fromlist=["Item"]).Item


def _rows(model: Any) -> list[Any]:
    # Ties on created_at (ten rows per instant) so the key's second column matters.
    return [
        model(id=uuid.uuid4(), title=f"t{n}", created_at=START + timedelta(seconds=n // 10))
        for n in range(ROWS)
    ]


def _order_index(model: Any) -> str:
    (index,) = [i for i in model._meta.indexes if list(i.fields) == ["created_at", "id"]]
    return str(index.name)


def test_the_compiled_model_indexes_the_list_order(app: Any) -> None:
    model = _item_model(app)
    migration = next((app.app_dir / "migrations").glob("0001_*.py")).read_text()
    assert _order_index(model) in migration


def test_sqlite_seeks_the_index_for_a_later_page(app: Any, db: Any) -> None:
    model = _item_model(app)
    model.objects.bulk_create(_rows(model))
    client = Client()
    page = client.get("/v1/items", {"limit": 50}).json()
    seen = [item["id"] for item in page["items"]]
    ran: list[tuple[str, Any]] = []

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        ran.append((sql, params))
        return execute(sql, params, many, context)

    for _ in range(5):  # walk to page 6, keeping the last request's SELECT
        ran.clear()
        with connection.execute_wrapper(record):
            page = client.get("/v1/items", {"limit": 50, "cursor": page["next_cursor"]}).json()
        seen += [item["id"] for item in page["items"]]
    expected = list(
        model.objects.order_by("created_at", "id").values_list("id", flat=True)[: len(seen)]
    )
    assert seen == [str(i) for i in expected]
    (sql, params) = next((s, p) for s, p in ran if model._meta.db_table in s and "ORDER BY" in s)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        plan = [str(row[-1]) for row in cursor.fetchall()]
    assert any(f"USING INDEX {_order_index(model)}" in line for line in plan), plan
    assert not any("TEMP B-TREE" in line for line in plan), plan
    assert any(line.startswith("SEARCH") for line in plan), plan  # a range, not a walk


def test_postgres_seeks_the_index_for_a_later_page(app: Any, postgres_dsn: str) -> None:
    from django.core.management import call_command

    from toolkit_batteries.api_runtime.crud import page_rows
    from toolkit_batteries.core.slots import slot_alias
    from toolkit_batteries.db.databases import postgres_entry

    model = _item_model(app)
    alias = slot_alias(connections, postgres_entry(postgres_dsn), preferred="", prefix="ks_db")
    call_command("migrate", app.label, database=alias, verbosity=0)
    try:
        manager = model.objects.db_manager(alias)
        manager.bulk_create(_rows(model))
        with connections[alias].cursor() as cursor:
            cursor.execute(f"ANALYZE {model._meta.db_table}")
        after = list(manager.order_by("created_at", "id").values_list("created_at", "id")[1500])
        page = page_rows(manager, ["created_at", "id"], after)[:51]
        plan = page.explain()
        assert f"Index Scan using {_order_index(model)}" in plan, plan
        assert "Index Cond: (ROW(created_at, id) > ROW(" in plan, plan
        assert "Sort" not in plan and "Seq Scan" not in plan, plan
        rows = list(page)
        assert len(rows) == 51 and rows[0].id == manager.order_by("created_at", "id")[1501].id
    finally:
        call_command("migrate", app.label, "zero", database=alias, verbosity=0)
        connections[alias].close()
