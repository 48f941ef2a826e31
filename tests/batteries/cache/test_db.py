"""The db adapter: its table, pool sharing, purging, and failures, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import time

import pytest

from toolkit_batteries.cache.adapters.db import DBCache
from toolkit_batteries.cache.sql import table_name
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError

from .helpers import FakeClock, drop_table, unique


@pytest.fixture(params=["sqlite", "postgres"])
def dsn(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "cache.db")
    return request.getfixturevalue("postgres_dsn")


def open_db_cache(dsn: str, instance: str, **options) -> tuple[Container, DBCache]:
    block = {"adapter": "db", "options": {"dsn": dsn, **options}}
    container = Container(Config.load({"cache": {instance: block}}, {}))
    return container, container.cache(instance)


def table_exists(database, table: str) -> bool:
    if database.dialect == "postgresql":
        sql = "SELECT count(*) FROM information_schema.tables WHERE table_name = %s"
    else:
        sql = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = %s"
    return database.fetch_value(sql, (table,)) == 1


class MyCache(DBCache):
    """A subclass that names its own table, as the spec says code does."""

    table = "tk_custom_cache"


def test_the_table_is_created_on_open_and_named_after_the_instance(dsn):
    instance = unique()
    container, cache = open_db_cache(dsn, instance)
    try:
        assert cache.table_name == f"toolkit_cache_{instance}"
        assert table_exists(cache._db(), cache.table_name)
    finally:
        drop_table(cache._db(), cache.table_name)
        container.close()


def test_a_subclass_sets_the_table_from_code(tmp_path):
    path = f"{__name__}.MyCache"
    container = Container(
        Config.load({"cache": {"adapter": path, "options": {"dsn": str(tmp_path / "c.db")}}}, {})
    )
    cache = container.cache()
    assert cache.table_name == "tk_custom_cache"
    assert table_exists(cache._db(), "tk_custom_cache")
    container.close()


def test_table_names_are_safe_distinct_and_bounded():
    assert table_name("toolkit_cache", "default") == "toolkit_cache"
    assert table_name("toolkit_cache", "sessions") == "toolkit_cache_sessions"
    dashed, underscored = table_name("toolkit_cache", "a-b"), table_name("toolkit_cache", "a_b")
    assert dashed != underscored and dashed.startswith("toolkit_cache_a_b_")
    long_a = table_name("toolkit_cache", "x" * 100 + "a")
    long_b = table_name("toolkit_cache", "x" * 100 + "b")
    assert long_a != long_b and len(long_a) <= 63 and len(long_b) <= 63
    hostile = table_name("toolkit_cache", "x; DROP TABLE users")
    assert hostile.replace("_", "").isalnum()
    with pytest.raises(ValueError):
        table_name("Bad Table", "default")


def test_an_empty_dsn_borrows_the_db_service(tmp_path):
    instance = unique()
    container = Container(
        Config.load(
            {
                "db": {"adapter": "sqlfile", "options": {"path": str(tmp_path / "app.db")}},
                "cache": {instance: {"adapter": "db"}},
            },
            {},
        )
    )
    cache = container.cache(instance)
    assert cache._db() is container.db()
    cache.set("k", "v")
    assert container.db().fetch_value(f"SELECT count(*) FROM {cache.table_name}") == 1
    assert [p["owner"] for p in container.pools.describe()] == ["db.default"]
    container.close()


def test_the_same_dsn_shares_one_pool_unless_dedicated(postgres_dsn):
    a, b, c = unique(), unique(), unique()
    block = {"adapter": "db", "options": {"dsn": postgres_dsn}}
    private = {"adapter": "db", "options": {"dsn": postgres_dsn, "dedicated_pool": True}}
    container = Container(
        Config.load(
            {
                "db": {"adapter": "sqlserver", "options": {"dsn": postgres_dsn}},
                "cache": {a: block, b: block, c: private},
            },
            {},
        )
    )
    try:
        container.db()
        caches = [container.cache(name) for name in (a, b, c)]
        described = container.pools.describe()
        assert len(described) == 2
        shared = next(p for p in described if not p["private"])
        assert shared["owner"] == "db.default"
        assert sorted(shared["borrowers"]) == sorted(["db.default", f"cache.{a}", f"cache.{b}"])
        assert caches[0]._db().pool is caches[1]._db().pool is container.db().pool
        assert caches[2]._db().pool is not container.db().pool
    finally:
        for cache in caches:
            drop_table(cache._db(), cache.table_name)
        container.close()


def test_expired_rows_are_purged_on_open_and_every_sweep_interval(dsn):
    instance = unique()
    container, cache = open_db_cache(dsn, instance, sweep_interval="10s")
    database, table = cache._db(), cache.table_name
    try:
        clock = FakeClock(time.time())
        cache.clock = clock
        cache.purge()
        cache.set_many({"a": 1, "b": 2}, timeout=1)
        cache.set("c", 3, timeout=None)
        clock.advance(5)
        cache.set("d", 4)  # before the interval: the expired rows stay
        assert database.fetch_value(f"SELECT count(*) FROM {table}") == 4
        assert cache.get_many(["a", "b", "c", "d"]) == {"c": 3, "d": 4}
        clock.advance(10)
        cache.set("e", 5)
        assert database.fetch_value(f"SELECT count(*) FROM {table}") == 3
        # Rows already expired when a container opens are purged by the open itself.
        database.execute(
            f"INSERT INTO {table} (cache_key, value, expires_at) VALUES (%s, %s, %s)",
            ("stale", b"\x80", time.time() - 100),
        )
        reopened = Container(
            Config.load({"cache": {instance: {"adapter": "db", "options": {"dsn": dsn}}}}, {})
        )
        reopened.cache(instance)
        assert (
            database.fetch_value(f"SELECT count(*) FROM {table} WHERE cache_key = %s", ("stale",))
            == 0
        )
        reopened.close()
    finally:
        drop_table(database, table)
        container.close()


def test_concurrent_opens_of_a_new_table_do_not_collide(postgres_dsn):
    instance = unique()
    block = {"adapter": "db", "options": {"dsn": postgres_dsn}}
    containers = [Container(Config.load({"cache": {instance: block}}, {})) for _ in range(6)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(containers))

    def open_one(container: Container) -> None:
        barrier.wait()
        try:
            container.cache(instance).set("k", "v")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one, args=(c,)) for c in containers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
    finally:
        drop_table(containers[0].cache(instance)._db(), f"toolkit_cache_{instance}")
        for container in containers:
            container.close()


def test_an_invalid_dsn_names_the_field_not_the_value():
    container = Container(
        Config.load(
            {"cache": {"adapter": "db", "options": {"dsn": "mysql://root:hunter2@db/app"}}}, {}
        )
    )
    with pytest.raises(InvalidOptionsError, match=r'cache\.default: option "dsn"') as caught:
        container.cache()
    assert "hunter2" not in str(caught.value)
    container.close()


def test_an_unreachable_server_fails_the_open_quickly():
    container = Container(
        Config.load(
            {
                "cache": {
                    "adapter": "db",
                    "options": {"dsn": "postgresql://postgres:pw@127.0.0.1:1/test"},
                }
            },
            {},
        )
    )
    started = time.monotonic()
    with pytest.raises(ServiceUnavailableError, match=r"cache\.default: unavailable") as caught:
        container.cache()
    assert time.monotonic() - started < 5
    assert "pw" not in str(caught.value).replace("unavailable", "")
    container.close()
