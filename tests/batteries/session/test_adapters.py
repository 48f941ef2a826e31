"""What differs between session adapters: key layout, tables, pools, failures, checks."""

from __future__ import annotations

import socket
import sqlite3
from datetime import timedelta

import pytest
from django.core import checks
from django.db import connections, transaction
from django.test import override_settings

from tests.support.clock import EPOCH, FakeClock
from tests.support.processes import python_prints
from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError
from toolkit_batteries.db import MissingTablesError
from toolkit_batteries.session.adapters.db import TABLE, DBSessionStore
from toolkit_batteries.session.adapters.memory import MemorySessionStore

from .conftest import empty_session_table


def _container(settings: dict) -> Container:
    return Container(Config.load(settings, {}))


# ------------------------------------------------------------------ kvserver


def test_kvserver_keys_are_prefix_session_id_with_a_px_expiry(redis_url, redis_prefix):
    prefix, raw = redis_prefix
    block = {"addr": redis_url, "prefix": prefix}
    with _container({"session": {"adapter": "redis", "options": {"kvserver": block}}}) as c:
        store = c.session()
        sid = store.create({"user_id": 7}, ttl=timedelta(seconds=90))
        key = f"{prefix}session:{sid}"
        assert raw.get(key) == b'{"user_id":7}'
        assert 85_000 < raw.pttl(key) <= 90_000
        assert [k.decode() for k in raw.scan_iter(match=f"{prefix}*")] == [key]
        store.delete(sid)
        assert raw.exists(key) == 0


def test_kvserver_borrows_the_shared_client(redis_url, redis_prefix):
    prefix, _ = redis_prefix
    block = {"addr": redis_url, "prefix": prefix}
    settings = {
        "session": {
            "default": {"adapter": "kvserver", "options": {"kvserver": block}},
            "admin": {"adapter": "kvserver", "options": {"kvserver": {**block, "prefix": "x"}}},
        }
    }
    with _container(settings) as c:
        assert c.session().client is c.session("admin").client
        (entry,) = c.pools.describe()
        assert entry["borrowers"] == ["session.default", "session.admin"]
        assert "password" not in entry["target"]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_kvserver_unreachable_raises_service_unavailable_without_the_address():
    port = _closed_port()
    block = {"addr": f"127.0.0.1:{port}", "password": "hunter2-secret"}
    with _container({"session": {"adapter": "kvserver", "options": {"kvserver": block}}}) as c:
        store = c.session()
        with pytest.raises(ServiceUnavailableError) as info:
            store.create({"a": 1})
    message = str(info.value)
    assert message.startswith("session.default: unavailable")
    assert str(port) not in message and "hunter2" not in message


# ------------------------------------------------------------------ db


def test_db_with_empty_dsn_borrows_the_db_service(sqlite_dsn):
    settings = {
        "db": {"adapter": "sqlfile", "options": {"path": sqlite_dsn}},
        "session": {"adapter": "db"},
    }
    with _container(settings) as c:
        store = c.session()
        assert store.database is c.db()
        store.create({"a": 1})
        assert c.db().fetch_value(f"SELECT count(*) FROM {TABLE}") == 1
        # The dependency opened first, so it closes last.
        assert c.opened() == (("db", "default"), ("session", "default"))


def test_db_with_a_dsn_writes_through_the_django_alias_of_that_database(postgres_dsn):
    import psycopg

    settings = {"session": {"adapter": "db", "options": {"dsn": postgres_dsn}}}
    try:
        with _container(settings) as c:
            store: DBSessionStore = c.session()
            assert store.database.dialect == "postgresql"
            assert connections[store.database.alias].vendor == "postgresql"
            sid = store.create({"pg": True})
            with psycopg.connect(postgres_dsn) as raw:
                row = raw.execute(f"SELECT data FROM {TABLE} WHERE id = %s", (sid,)).fetchone()
            assert row == ('{"pg":true}',)
    finally:
        empty_session_table(postgres_dsn)


def test_db_dsn_of_the_project_database_shares_its_alias_unless_dedicated(sqlite_dsn):
    db = {"adapter": "sqlfile", "options": {"path": sqlite_dsn}}
    shared = {"db": db, "session": {"adapter": "db", "options": {"dsn": sqlite_dsn}}}
    with _container(shared) as c:
        assert c.session().database.alias == c.db().alias
    own = {"adapter": "db", "options": {"dsn": sqlite_dsn, "dedicated_pool": True}}
    with _container({"db": db, "session": own}) as c:
        assert c.session().database.alias != c.db().alias


def test_db_rows_persist_across_containers(sqlite_dsn):
    settings = {"session": {"adapter": "db", "options": {"dsn": sqlite_dsn}}}
    with _container(settings) as first:
        sid = first.session().create({"kept": 1}, ttl=timedelta(hours=1))
    with _container(settings) as second:  # a restart
        assert second.session().get(sid) == {"kept": 1}


def test_db_expired_rows_are_removed_when_met(sqlite_dsn):
    settings = {"session": {"adapter": "db", "options": {"dsn": sqlite_dsn}}}
    with _container(settings) as c:
        store: DBSessionStore = c.session()
        store.clock = clock = FakeClock(EPOCH)
        sid = store.create({"a": 1}, ttl=timedelta(seconds=10))
        clock.advance(10)
        assert store.get(sid) is None
        count = store.database.fetch_value(f"SELECT count(*) FROM {TABLE} WHERE id = %s", (sid,))
        assert count == 0


def test_db_open_without_the_table_names_migrate_and_creates_nothing(tmp_path):
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()
    settings = {"session": {"adapter": "db", "options": {"dsn": str(path)}}}
    with _container(settings) as c, pytest.raises(MissingTablesError) as info:
        c.session()
    assert TABLE in str(info.value) and "manage.py migrate" in str(info.value)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0


@pytest.mark.parametrize("where", ["sqlite", "postgres"])
def test_db_session_created_in_a_failing_atomic_block_is_gone(where, request):
    dsn = request.getfixturevalue("sqlite_dsn" if where == "sqlite" else "postgres_dsn")
    settings = {"session": {"adapter": "db", "options": {"dsn": dsn}}}
    made: list[str] = []
    try:
        with _container(settings) as c:
            store: DBSessionStore = c.session()
            alias = store.database.alias
            with pytest.raises(RuntimeError), transaction.atomic(using=alias):
                made.append(store.create({"rolled": "back"}))
                assert store.get(made[0]) == {"rolled": "back"}  # visible inside
                raise RuntimeError("the caller's work failed")
            assert store.get(made[0]) is None
            with transaction.atomic(using=alias):
                kept = store.create({"committed": True})
            assert store.get(kept) == {"committed": True}
            count = store.database.fetch_value(f"SELECT count(*) FROM {TABLE}")
            assert count == 1
    finally:
        if where == "postgres":
            empty_session_table(dsn)


def test_db_taken_id_inside_the_callers_transaction_does_not_spoil_it(postgres_dsn, monkeypatch):
    from toolkit_batteries.session import base

    ids = iter(["taken-id-000000000000000000000000", "fresh-id-000000000000000000000000"])
    settings = {"session": {"adapter": "db", "options": {"dsn": postgres_dsn}}}
    try:
        with _container(settings) as c:
            store: DBSessionStore = c.session()
            store.create({"first": 1})  # a random id
            monkeypatch.setattr(base, "new_session_id", lambda: next(ids))
            store._insert("taken-id-000000000000000000000000", "{}", 60_000)
            with transaction.atomic(using=store.database.alias):
                # The first draw collides (an IntegrityError on PostgreSQL), the second
                # succeeds, and the caller's transaction is still usable afterwards.
                sid = store.create({"second": 2})
                assert store.database.fetch_value(f"SELECT count(*) FROM {TABLE}") == 3
            assert sid == "fresh-id-000000000000000000000000"
            assert store.get(sid) == {"second": 2}
    finally:
        empty_session_table(postgres_dsn)


def test_db_dsn_that_is_no_sql_target_fails_naming_the_field():
    settings = {"session": {"adapter": "db", "options": {"dsn": "mysql://u:topsecret@h/db"}}}
    with _container(settings) as c, pytest.raises(InvalidOptionsError) as info:
        c.session()
    assert 'session.default: option "dsn"' in str(info.value)
    assert "topsecret" not in str(info.value)


# ------------------------------------------------------------------ memory


def test_memory_sweeps_expired_sessions_on_write():
    store = MemorySessionStore(ttl=timedelta(seconds=5), clock=(clock := FakeClock(EPOCH)))
    old = [store.create({"i": i}) for i in range(10)]
    touched = old[0]
    clock.advance(4)
    assert store.touch(touched) is True  # its first heap entry is now stale
    clock.advance(2)
    store.create({"new": True})  # the write sweeps what expired
    assert len(store) == 2
    assert store.get(touched) == {"i": 0}


def test_memory_ttl_comes_from_options():
    with _container({"session": {"options": {"ttl": "90s"}}}) as c:
        store = c.session()
        assert isinstance(store, MemorySessionStore)
        assert store.ttl == timedelta(seconds=90)


def test_memory_is_per_container():
    with _container({}) as a, _container({}) as b:
        sid = a.session().create({"a": 1})
        assert b.session().get(sid) is None


def test_adapter_open_reads_options_through_the_context(tmp_path):
    options = Config.load({"session": {"options": {"ttl": "2m"}}}, {}).service("session").options
    c = _container({})
    ctx = OpenContext("session", "default", "memory", options, c, c.pools)
    assert MemorySessionStore.open(ctx).ttl == timedelta(minutes=2)
    c.close()


# ------------------------------------------------------------------ checks and imports


def _check_ids(toolkit: dict) -> list[str]:
    with override_settings(TOOLKIT=toolkit):
        return [
            m.id for m in checks.run_checks(tags=["toolkit"]) if m.id.startswith("toolkit_session.")
        ]


def test_checks_report_bad_connection_settings():
    assert _check_ids({}) == []
    bad_addr = {"adapter": "kvserver", "options": {"kvserver": {"addr": "ftp://h"}}}
    assert _check_ids({"session": bad_addr}) == ["toolkit_session.E002"]
    tls = {"adapter": "kvserver", "options": {"kvserver": {"require_tls": True}}}
    assert _check_ids({"session": tls}) == ["toolkit_session.E002"]
    bad_dsn = {"adapter": "db", "options": {"dsn": "mysql://h/db"}}
    assert _check_ids({"session": bad_dsn}) == ["toolkit_session.E003"]
    assert _check_ids({"session": {"adapter": "nope"}}) == ["toolkit_session.E001"]


def test_importing_the_battery_imports_no_driver():
    code = (
        "import sys, toolkit_batteries.session, toolkit_batteries.session.options\n"
        "print(','.join(m for m in ('redis', 'psycopg') if m in sys.modules))"
    )
    assert python_prints(code) == ""
