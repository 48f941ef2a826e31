"""What only the db adapter has: its tables come from migrations, its SQL per database."""

from __future__ import annotations

import json
import sqlite3

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.db import MissingTablesError
from toolkit_batteries.search.adapters.db import search_sql
from toolkit_batteries.search.query import parse_query

from .conftest import close_variant, open_variant


@pytest.mark.parametrize("adapter", ["db", "sqlfile", "sqlserver", "sqlite", "postgres"])
def test_no_ddl_at_open(adapter, tmp_path):
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()
    container = Container(
        Config.load({"search": {"adapter": adapter, "options": {"dsn": str(path)}}}, {})
    )
    try:
        with pytest.raises(MissingTablesError) as info:
            container.search()
        assert "manage.py migrate" in str(info.value) and str(path) not in str(info.value)
    finally:
        container.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0


def test_a_table_without_its_fts_index_is_refused(sqlite_dsn):
    with sqlite3.connect(sqlite_dsn) as conn:
        conn.execute("DROP TABLE toolkit_search_fts")
    container = Container(Config.load({"search": {"options": {"dsn": sqlite_dsn}}}, {}))
    try:
        with pytest.raises(MissingTablesError, match="toolkit_search_fts"):
            container.search()
    finally:
        container.close()


def test_the_migration_builds_fts5_on_sqlite(sqlite_dsn):
    with sqlite3.connect(sqlite_dsn) as conn:
        sql = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'toolkit_search_fts'"
        ).fetchone()[0]
        triggers = {
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' "
                "AND tbl_name = 'toolkit_search_document'"
            )
        }
    assert "fts5" in sql and "porter" in sql
    assert triggers == {"toolkit_search_fts_ai", "toolkit_search_fts_ad", "toolkit_search_fts_au"}


def test_the_migration_builds_a_gin_indexed_tsvector_on_postgres(postgres_dsn):
    import psycopg

    with psycopg.connect(postgres_dsn) as conn:
        column = conn.execute(
            "SELECT data_type FROM information_schema.columns WHERE table_name = "
            "'toolkit_search_document' AND column_name = 'search_vector'"
        ).fetchone()
        index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'toolkit_search_document_vector_gin'"
        ).fetchone()
    assert column == ("tsvector",)
    assert "gin (search_vector)" in index[0].lower()


def test_postgres_uses_the_gin_index(request):
    opened = open_variant("db-postgres", request)
    try:
        opened.search.bulk_index(
            "plan", [(str(i), {"body": f"filler text {i} lorem"}) for i in range(500)]
        )
        db = opened.search.database
        with db.transaction() as tx:
            tx.execute("SET LOCAL enable_seqscan = off")
            plan = "\n".join(
                row[0]
                for row in tx.fetch_all(
                    "EXPLAIN SELECT id FROM toolkit_search_document WHERE search_vector @@ "
                    "plainto_tsquery('english'::regconfig, %s)",
                    ("lorem",),
                )
            )
        assert "toolkit_search_document_vector_gin" in plan
    finally:
        close_variant(opened)


def _highlighted_page(opened, words: str) -> tuple[str, list]:
    """Index 30 documents; return the adapter's statement for a highlighted first page."""
    opened.search.bulk_index(
        "plan", [(str(i), {"body": f"alpha beta {i} gamma delta"}) for i in range(30)]
    )
    search = opened.search
    return search_sql(
        search.dialect, search.instance, "plan", parse_query(words), {}, 11, None, True
    )


def test_sqlite_highlights_each_page_row_once(request):
    # The snippet slice reads the highlighted text five times; were the subquery
    # flattened, SQLite would run the highlight subquery (an FTS MATCH) five times a row.
    opened = open_variant("db-sqlite", request)
    try:
        sql, params = _highlighted_page(opened, "alpha beta")
        plan = [
            row[-1] for row in opened.search.database.fetch_all("EXPLAIN QUERY PLAN " + sql, params)
        ]
        assert sum("CORRELATED SCALAR SUBQUERY" in step for step in plan) == 1
        hits = opened.search.query("plan", "alpha beta", limit=10).hits
        assert len(hits) == 10 and all("<mark>alpha</mark>" in hit.snippet for hit in hits)
    finally:
        close_variant(opened)


def test_postgres_runs_ts_headline_once_per_page_row(request):
    # ts_headline is computed by a plan node of its own, once per row of the page, not
    # substituted into each of the five places the snippet slice reads it.
    opened = open_variant("db-postgres", request)
    try:
        sql, params = _highlighted_page(opened, "alpha beta")
        (plan,) = opened.search.database.fetch_one(
            "EXPLAIN (VERBOSE, ANALYZE, FORMAT JSON) " + sql, params
        )
        plan = json.loads(plan) if isinstance(plan, str) else plan

        def nodes(node: dict):
            yield node
            for child in node.get("Plans", []):
                yield from nodes(child)

        computing = [
            node
            for node in nodes(plan[0]["Plan"])
            if any(item.startswith("ts_headline(") for item in node.get("Output", []))
        ]
        assert len(computing) == 1
        assert computing[0]["Actual Loops"] * computing[0]["Actual Rows"] == 11
        hits = opened.search.query("plan", "alpha beta", limit=10).hits
        assert len(hits) == 10 and all("<mark>alpha</mark>" in hit.snippet for hit in hits)
    finally:
        close_variant(opened)


def test_language_is_the_postgres_text_search_configuration(request):
    simple = open_variant("db-postgres", request, language="simple")
    english = open_variant("db-postgres", request)
    try:
        for handle in (simple, english):
            handle.search.index("docs", "1", {"body": "The runners were running"})
        # english stems (running -> run) and drops stop words; simple does neither.
        assert english.search.query("docs", "run").doc_ids == ["1"]
        assert simple.search.query("docs", "run").doc_ids == []
        assert simple.search.query("docs", "running").doc_ids == ["1"]
        row = simple.search.database.fetch_one(
            "SELECT language FROM toolkit_search_document WHERE instance = %s",
            (simple.instance,),
        )
        assert row == ("simple",)
    finally:
        close_variant(simple)
        close_variant(english)


def test_an_unknown_language_is_refused_at_open(request):
    with pytest.raises(InvalidOptionsError) as info:
        open_variant("db-postgres", request, language="klingon")
    assert 'option "language"' in str(info.value) and "klingon" not in str(info.value)


def test_documents_join_the_callers_transaction(request):
    from django.db import transaction

    opened = open_variant("db-sqlite", request)
    try:
        with pytest.raises(RuntimeError), transaction.atomic(using=opened.search.database.alias):
            opened.search.index("docs", "1", {"body": "rolled back words"})
            assert opened.search.query("docs", "rolled").doc_ids == ["1"]
            raise RuntimeError
        assert opened.search.query("docs", "rolled").doc_ids == []
        assert opened.search.count("docs") == 0
    finally:
        close_variant(opened)


def test_instances_share_the_table_but_not_their_documents(request):
    first = open_variant("db-sqlite", request)
    try:
        second_block = {"adapter": "db", "options": {"dsn": first.search.database.target}}
        container = Container(Config.load({"search": {"other": second_block}}, {}))
        other = container.search("other")
        first.search.index("docs", "1", {"body": "private words"})
        assert other.query("docs", "private").doc_ids == []
        assert first.search.query("docs", "private").doc_ids == ["1"]
        container.close()
    finally:
        close_variant(first)


def test_an_empty_dsn_borrows_the_db_service(sqlite_dsn):
    toolkit = {
        "db": {"adapter": "sqlfile", "options": {"path": sqlite_dsn}},
        "search": {"adapter": "db"},
    }
    container = Container(Config.load(toolkit, {}))
    try:
        search = container.search()
        assert search.database is container.db()
        search.index("docs", "1", {"body": "borrowed connection"})
        assert search.query("docs", "borrowed").doc_ids == ["1"]
        assert container.db().fetch_value("SELECT count(*) FROM toolkit_search_document") == 1
    finally:
        container.close()
