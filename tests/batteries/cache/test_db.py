"""The db adapter: its migrated table, database aliases, purging, failures (SQLite, PostgreSQL)."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from toolkit_batteries.cache.adapters.db import TABLE, DBCache
from toolkit_batteries.cache.models import CacheEntry
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError
from toolkit_batteries.db import MissingTablesError

from .helpers import FakeClock, unique


@pytest.fixture(params=["sqlite", "postgres"])
def dsn(request) -> str:
    if request.param == "sqlite":
        return request.getfixturevalue("sqlite_dsn")
    return request.getfixturevalue("postgres_dsn")


def open_db_cache(dsn: str, instance: str, **options) -> tuple[Container, DBCache]:
    block = {"adapter": "db", "options": {"dsn": dsn, **options}}
    container = Container(Config.load({"cache": {instance: block}}, {}))
    return container, container.cache(instance)


def rows(database, instance: str, where: str = "", params: tuple = ()) -> int:
    return database.fetch_value(
        f"SELECT count(*) FROM {TABLE} WHERE namespace = %s{where}", (instance, *params)
    )


class MyCache(DBCache):
    """A subclass named by its dotted path, as the spec lets code do."""


def test_a_database_without_the_table_fails_the_open_naming_migrate(tmp_path):
    empty = tmp_path / "empty.db"
    container = Container(
        Config.load({"cache": {"adapter": "db", "options": {"dsn": str(empty)}}}, {})
    )
    with pytest.raises(MissingTablesError, match=r"manage\.py migrate --database") as caught:
        container.cache()
    assert caught.value.tables == (TABLE,)
    with sqlite3.connect(empty) as raw:  # nothing ran DDL
        assert raw.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)
    container.close()


def test_entries_live_in_the_migrated_table_under_the_instance_namespace(dsn):
    instance = unique()
    container, cache = open_db_cache(dsn, instance)
    try:
        cache.set("k", "v")
        assert cache.table_name == TABLE == CacheEntry._meta.db_table
        assert rows(cache._db(), instance) == 1
        assert CacheEntry.objects.using(cache._db().alias).get(namespace=instance).cache_key == (
            ":1:k"
        )
    finally:
        cache.clear()
        container.close()


def test_a_subclass_named_by_its_path_is_what_django_builds(sqlite_dsn):
    path = f"{__name__}.MyCache"
    container = Container(
        Config.load({"cache": {"adapter": path, "options": {"dsn": sqlite_dsn}}}, {})
    )
    cache = container.cache()
    assert type(cache) is MyCache
    cache.set("k", 1)
    assert cache.get("k") == 1
    container.close()


def test_an_empty_dsn_borrows_the_db_service(sqlite_dsn):
    instance = unique()
    container = Container(
        Config.load(
            {
                "db": {"adapter": "sqlfile", "options": {"path": sqlite_dsn}},
                "cache": {instance: {"adapter": "db"}},
            },
            {},
        )
    )
    cache = container.cache(instance)
    assert cache._db().alias == container.db().alias
    cache.set("k", "v")
    assert rows(container.db(), instance) == 1
    container.close()


def test_a_cache_write_joins_the_callers_transaction(dsn):
    from django.db import transaction

    instance = unique()
    container, cache = open_db_cache(dsn, instance)
    alias = cache._db().alias
    try:
        with pytest.raises(RuntimeError), transaction.atomic(using=alias):
            cache.set("k", "rolled back")
            raise RuntimeError
        assert cache.get("k") is None
        with transaction.atomic(using=alias):
            cache.set("k", "committed")
        assert cache.get("k") == "committed"
    finally:
        cache.clear()
        container.close()


def test_the_same_dsn_shares_one_alias_unless_dedicated(postgres_dsn):
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
        assert caches[0]._db().alias == caches[1]._db().alias == container.db().alias
        assert caches[2]._db().alias != container.db().alias
        for cache in caches:
            cache.set("k", cache.instance)
        assert [cache.get("k") for cache in caches] == [a, b, c]
    finally:
        for cache in caches:
            cache.clear()
        container.close()


def test_expired_rows_are_purged_on_open_and_every_sweep_interval(dsn):
    instance = unique()
    container, cache = open_db_cache(dsn, instance, sweep_interval="10s")
    database = cache._db()
    try:
        clock = FakeClock(time.time())
        cache.clock = clock
        cache.purge()
        cache.set_many({"a": 1, "b": 2}, timeout=1)
        cache.set("c", 3, timeout=None)
        clock.advance(5)
        cache.set("d", 4)  # before the interval: the expired rows stay
        assert rows(database, instance) == 4
        assert cache.get_many(["a", "b", "c", "d"]) == {"c": 3, "d": 4}
        clock.advance(10)
        cache.set("e", 5)
        assert rows(database, instance) == 3
        # Rows already expired when a container opens are purged by the open itself.
        database.execute(
            f"INSERT INTO {TABLE} (namespace, cache_key, value, expires_at) "
            "VALUES (%s, %s, %s, %s)",
            (instance, "stale", b"\x80", time.time() - 100),
        )
        reopened = Container(
            Config.load({"cache": {instance: {"adapter": "db", "options": {"dsn": dsn}}}}, {})
        )
        reopened.cache(instance)
        assert rows(database, instance, " AND cache_key = %s", ("stale",)) == 0
        reopened.close()
    finally:
        cache.clear()
        container.close()


def test_concurrent_opens_do_not_collide(postgres_dsn):
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
        assert containers[0].cache(instance).get("k") == "v"
    finally:
        containers[0].cache(instance).clear()
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
