"""What only the ``db`` adapter has: its search engines, Django's transactions, the table.

Both dialects are real: a fresh migrated SQLite file and a migrated database on the
PostgreSQL server (with pgvector, and a second one migrated without it).
"""

from __future__ import annotations

import importlib
import os
import secrets
import sqlite3
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.db import transaction

from tests.support.batteries import empty_sqlite, refused_without_tables
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.vectorstore.adapters.db import TABLE, DBVectorStore

from ..cache.helpers import unique
from .conftest import DIMENSION, delete_rows, random_vectors
from .test_contract import exact


class Boom(Exception):
    """The caller's work failed after the vectors were written."""


def open_store(dsn: str, **options) -> tuple[Container, DBVectorStore]:
    instance = unique()
    block = {"adapter": "db", "options": {"dsn": dsn, "dimension": DIMENSION, **options}}
    container = Container(Config.load({"vectorstore": {instance: block}}, {}))
    return container, container.vectorstore(instance)


@pytest.fixture(params=["sqlite_dsn", "postgres_dsn"])
def store(request) -> Iterator[DBVectorStore]:
    container, opened = open_store(request.getfixturevalue(request.param))
    try:
        yield opened
    finally:
        delete_rows(opened)
        container.close()


def test_each_dialect_searches_with_its_extension(sqlite_dsn, postgres_dsn):
    container, on_sqlite = open_store(sqlite_dsn)
    assert on_sqlite.kind == "sqlite-vec"
    container.close()
    container, on_postgres = open_store(postgres_dsn)
    try:
        assert on_postgres.kind == "pgvector"
        assert on_postgres.database.fetch_value(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        )
        assert (
            on_postgres.database.fetch_value(
                "SELECT udt_name FROM information_schema.columns "
                "WHERE table_name = %s AND column_name = 'embedding'",
                (TABLE,),
            )
            == "vector"
        )
    finally:
        container.close()


def test_the_sqlite_column_holds_sqlite_vec_blobs(sqlite_dsn):
    container, store = open_store(sqlite_dsn)
    try:
        store.upsert([("a", [1.0] * DIMENSION)])
        with sqlite3.connect(sqlite_dsn) as raw:
            (blob,) = raw.execute(f"SELECT embedding FROM {TABLE}").fetchone()
        assert isinstance(blob, bytes) and len(blob) == 4 * DIMENSION
    finally:
        delete_rows(store)
        container.close()


def test_vectors_written_in_a_transaction_that_raises_are_gone(store):
    with pytest.raises(Boom), transaction.atomic(using=store.database.alias):
        store.upsert([("a", random_vectors(1)[0])])
        # Inside the caller's transaction its own writes are visible to queries.
        assert [m.id for m in store.query(random_vectors(1)[0], k=1)] == ["a"]
        raise Boom
    assert store.count() == 0
    assert store.query(random_vectors(1)[0], k=1) == []


def test_vectors_written_in_a_committed_transaction_stay(store):
    with transaction.atomic(using=store.database.alias):
        store.upsert([("a", random_vectors(1)[0])])
    assert [m.id for m in store.query(random_vectors(1)[0], k=1)] == ["a"]


def test_instances_sharing_a_table_never_see_each_other(sqlite_dsn):
    first_container, first = open_store(sqlite_dsn)
    second_container, second = open_store(sqlite_dsn)
    try:
        first.upsert([("a", random_vectors(1)[0])])
        assert second.count() == 0
        assert second.query(random_vectors(1)[0], k=5) == []
        assert second.delete(["a"]) == 0
        assert first.count() == 1
    finally:
        for container, opened in ((first_container, first), (second_container, second)):
            delete_rows(opened)
            container.close()


def test_rows_of_another_dimension_are_left_out(sqlite_dsn):
    container, small = open_store(sqlite_dsn)
    small.upsert([("a", random_vectors(1)[0])])
    instance = small.instance
    container.close()
    block = {"adapter": "db", "options": {"dsn": sqlite_dsn, "dimension": 4}}
    container = Container(Config.load({"vectorstore": {instance: block}}, {}))
    try:
        wider = container.vectorstore(instance)
        assert wider.query([1.0, 0.0, 0.0, 0.0], k=5) == []
        assert wider.get(["a"]) == []
    finally:
        delete_rows(wider)
        container.close()


def test_the_python_scan_gives_the_sqlite_vec_answer(sqlite_dsn):
    container, store = open_store(sqlite_dsn)
    try:
        vectors = {f"r{i:03d}": v for i, v in enumerate(random_vectors(200))}
        store.upsert([(key, v, {"odd": int(key[1:]) % 2}) for key, v in vectors.items()])
        query = random_vectors(1, seed=42)[0]
        for metric in ("cosine", "l2", "ip"):
            fast = store.query(query, k=10, metric=metric, filter={"odd": 1})
            store.kind, reader, store._reader = "python", store._reader, None
            slow = store.query(query, k=10, metric=metric, filter={"odd": 1})
            store.kind, store._reader = "sqlite-vec", reader
            assert [m.id for m in fast] == [m.id for m in slow]
            assert [m.distance for m in fast] == pytest.approx([m.distance for m in slow], abs=1e-5)
    finally:
        delete_rows(store)
        container.close()


def test_opening_an_unmigrated_database_runs_no_ddl(tmp_path):
    path = empty_sqlite(tmp_path, "empty.db")
    block = {"adapter": "db", "options": {"dsn": str(path)}}
    refused_without_tables(Container(Config.load({"vectorstore": block}, {})), "vectorstore", path)


@pytest.fixture
def postgres_without_pgvector(postgres_server_dsn, django_db_blocker, monkeypatch) -> Iterator[str]:
    """Return a fresh PostgreSQL database migrated as if the server had no pgvector."""
    import psycopg
    from django.db import connections

    from tests.conftest import migrate_database
    from toolkit_batteries.db.databases import postgres_entry

    migration = importlib.import_module("toolkit_batteries.vectorstore.migrations.0001_initial")
    monkeypatch.setattr(
        migration.EnableVectorExtension, "database_forwards", lambda *args, **kwargs: None
    )
    name = f"toolkit_nv_{os.getpid()}_{secrets.token_hex(4)}"
    with psycopg.connect(postgres_server_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    dsn = urlunsplit(urlsplit(postgres_server_dsn)._replace(path=f"/{name}"))
    try:
        with django_db_blocker.unblock():
            migrate_database(postgres_entry(dsn))
        monkeypatch.undo()
        yield dsn
    finally:
        for conn in connections.all(initialized_only=True):
            if conn.settings_dict.get("NAME") == name:
                conn.close()
        with psycopg.connect(postgres_server_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_postgres_without_pgvector_searches_a_float_array_exactly(postgres_without_pgvector):
    container, store = open_store(postgres_without_pgvector)
    try:
        assert store.kind == "sqlarray"
        assert (
            store.database.fetch_value("SELECT count(*) FROM pg_extension WHERE extname = 'vector'")
            == 0
        )
        vectors = {f"r{i:03d}": v for i, v in enumerate(random_vectors(120))}
        store.upsert([(key, v, {"odd": int(key[1:]) % 2}) for key, v in vectors.items()])
        store.upsert([("zero", [0.0] * DIMENSION, {"odd": 0})])
        query = random_vectors(1, seed=8)[0]
        for metric in ("cosine", "l2", "ip"):
            matches = store.query(query, k=10, metric=metric)
            assert [m.id for m in matches] == exact(vectors, query, metric, 10)
        odd = {key: v for key, v in vectors.items() if int(key[1:]) % 2}
        matches = store.query(query, k=5, metric="l2", filter={"odd": 1})
        assert [m.id for m in matches] == exact(odd, query, "l2", 5)
        assert store.get(["r001"])[0].vector == pytest.approx(vectors["r001"], abs=1e-6)
    finally:
        container.close()


def test_the_in_memory_copy_follows_writes_from_another_connection(sqlite_dsn):
    reader_container, reader = open_store(sqlite_dsn)
    block = {"adapter": "db", "options": {"dsn": sqlite_dsn, "dimension": DIMENSION}}
    writer_container = Container(
        Config.load({"vectorstore": {reader.instance: block}}, {}),
    )
    try:
        writer = writer_container.vectorstore(reader.instance)
        vectors = random_vectors(3)
        writer.upsert([("a", vectors[0]), ("b", vectors[1])])
        assert [m.id for m in reader.query(vectors[1], k=1)] == ["b"]
        writer.upsert([("c", vectors[2])])
        assert [m.id for m in reader.query(vectors[2], k=1)] == ["c"]
        writer.delete(["c"])
        assert "c" not in {m.id for m in reader.query(vectors[2], k=5)}
        writer.upsert([("a", vectors[2], {"moved": True})])
        assert reader.query(vectors[2], k=1)[0].metadata == {"moved": True}
        writer.drop_namespace("default")
        assert reader.query(vectors[2], k=5) == []
    finally:
        delete_rows(reader)
        writer_container.close()
        reader_container.close()


def test_the_in_memory_copy_and_the_sql_scan_agree(sqlite_dsn, monkeypatch):
    from toolkit_batteries.vectorstore.adapters import _memindex

    container, store = open_store(sqlite_dsn)
    try:
        vectors = {f"r{i:03d}": v for i, v in enumerate(random_vectors(250))}
        items = [(key, v, {"odd": int(key[1:]) % 2, "tag": key[-1]}) for key, v in vectors.items()]
        store.upsert(items)
        store.upsert([("zero", [0.0] * DIMENSION, {"odd": 0, "tag": "z"})])
        cases = [
            (query, metric, where)
            for query in random_vectors(3, seed=21)
            for metric in ("cosine", "l2", "ip")
            for where in (None, {"odd": 1}, {"odd": 0, "tag": "4"})
        ]
        copied = [store.query(q, k=7, metric=m, filter=f) for q, m, f in cases]
        monkeypatch.setattr(_memindex, "MAX_BYTES", 0)  # too big to copy: the SQL scan
        store._index.clear()
        scanned = [store.query(q, k=7, metric=m, filter=f) for q, m, f in cases]
        for fast, slow in zip(copied, scanned, strict=True):
            assert [m.id for m in fast] == [m.id for m in slow]
            assert [m.metadata for m in fast] == [m.metadata for m in slow]
            assert [m.distance for m in fast] == pytest.approx(
                [m.distance for m in slow], rel=1e-5, abs=1e-5
            )
    finally:
        delete_rows(store)
        container.close()


def test_new_writes_refresh_the_copy_without_reloading_it(sqlite_dsn, monkeypatch):
    from toolkit_batteries.vectorstore.adapters import _memindex

    container, store = open_store(sqlite_dsn)
    try:
        vectors = random_vectors(4)
        store.upsert([("a", vectors[0]), ("b", vectors[1])])
        assert [m.id for m in store.query(vectors[0], k=1)] == ["a"]

        def no_full_load(*args, **kwargs):
            raise AssertionError("a write without deletes reloaded the whole namespace")

        monkeypatch.setattr(_memindex, "_load", no_full_load)
        store.upsert([("c", vectors[2]), ("a", vectors[3], {"v": 2})])
        assert [m.id for m in store.query(vectors[2], k=1)] == ["c"]
        assert store.query(vectors[3], k=1)[0].id == "a"
        assert store.query(vectors[3], k=1)[0].metadata == {"v": 2}
        assert len(store.query(vectors[0], k=10)) == 3
        store.delete(["c"])
        with pytest.raises(Exception, match="reloaded the whole namespace"):
            store.query(vectors[2], k=1)  # a delete does reload
    finally:
        delete_rows(store)
        container.close()
