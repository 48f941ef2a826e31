"""Pool sharing (spec: "Pool sharing"): one pool per target, closed once, after everyone.

SQL databases are Django connection aliases (one per database), exercised on real SQLite
files and the real PostgreSQL server; key-value clients on the real Redis server
(database 15).
"""

from __future__ import annotations

import logging
import os
import ssl
import sys
import uuid
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import (
    ConfigurationError,
    InvalidOptionsError,
    MissingExtraError,
    ServiceUnavailableError,
)
from toolkit_batteries.core.groups import KVServerBlock, KVServerConnection
from toolkit_batteries.core.kvclient import default_pool_size
from toolkit_batteries.core.pools import (
    MEMORY,
    PoolRegistry,
    parse_sql_target,
    resolve_kv_address,
)
from toolkit_batteries.db.connections import open_database_alias
from toolkit_batteries.db.databases import dsn_entry


def with_query(dsn: str, **params: str) -> str:
    """Append query parameters to a URL DSN."""
    joiner = "&" if "?" in dsn else "?"
    return dsn + joiner + "&".join(f"{k}={v}" for k, v in params.items())


@pytest.fixture
def registry():
    reg = PoolRegistry()
    yield reg
    reg.close()


# --------------------------------------------------------------------------- targets


@pytest.mark.parametrize(
    "dsn",
    [
        "postgres://u:p@h:5432/app",
        "postgresql://h/app?sslmode=disable",
        "POSTGRESQL://h/app",
        "host=localhost dbname=app user=me",
        "  dbname=app  ",
    ],
)
def test_postgres_targets_keep_the_trimmed_dsn(dsn):
    target = parse_sql_target(dsn)
    assert target.dialect == "postgresql"
    assert target.location == dsn.strip()
    assert target.share_key == ("postgresql", dsn.strip())


@pytest.mark.parametrize(
    ("dsn", "relative"),
    [
        ("a.db", "a.db"),
        ("./a.db", "a.db"),
        ("sub/../a.db", "a.db"),
        ("sqlite:///a.db", "a.db"),
        ("file:a.db", "a.db"),
        ("file:a.db?mode=rwc", "a.db"),
        ("key=value.db", "key=value.db"),  # not a libpq keyword: a file
    ],
)
def test_sqlite_targets_share_by_cleaned_absolute_path(dsn, relative, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    target = parse_sql_target(dsn)
    assert target.dialect == "sqlite"
    assert target.location == str(tmp_path / relative)


def test_absolute_sqlite_urls(tmp_path):
    path = tmp_path / "x.db"
    assert parse_sql_target(f"sqlite:///{path}").location == str(path)  # sqlite:////abs
    assert parse_sql_target(f"file://{path}").location == str(path)
    assert parse_sql_target(f"file://localhost{path}").location == str(path)


@pytest.mark.parametrize(
    "dsn",
    [
        ":memory:",
        " :memory: ",
        "sqlite://",
        "sqlite:///:memory:",
        "file::memory:",
        "file:x?mode=memory",
    ],
)
def test_memory_targets_never_share(dsn):
    target = parse_sql_target(dsn)
    assert target.memory
    assert target.location == MEMORY
    assert target.share_key is None


@pytest.mark.parametrize("dsn", ["", "   ", "mysql://h/app", "redis://h"])
def test_unsupported_targets_raise_without_the_value(dsn):
    with pytest.raises(ValueError) as info:
        parse_sql_target(dsn)
    assert "mysql" not in str(info.value)
    assert "redis://h" not in str(info.value)


def test_a_bad_dsn_is_invalid_options_without_the_value():
    toolkit = {"cache": {"default": {"adapter": "db", "options": {"dsn": "mysql://u:hunter2@h/a"}}}}
    container = Container(Config.load(toolkit, {}))
    try:
        with pytest.raises(InvalidOptionsError) as info:
            container.cache()
    finally:
        container.close()
    assert info.value.field == "dsn"
    assert "cache.default" in str(info.value)
    assert "hunter2" not in str(info.value)


def test_target_description_hides_the_password():
    target = parse_sql_target("postgres://app:hunter2@db/app")
    assert "hunter2" not in target.describe()
    assert "app" in target.describe()
    assert "hunter2" not in parse_sql_target("host=db password=hunter2").describe()


# --------------------------------------------------------------------------- Django aliases
#
# SQL batteries no longer hold pools: every database is a Django connection alias (one
# connection per thread, pooled by Django's OPTIONS["pool"] on PostgreSQL). The sharing
# rules the spec gives for pools hold for aliases.


def _alias(dsn: str, service: str = "db", **kwargs: Any) -> Any:
    entry = dsn_entry(dsn, None, service=service, instance="default")
    return open_database_alias(entry, service=service, instance="default", **kwargs)


def test_same_file_spelled_differently_shares_one_alias(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = _alias("./a.db")
    assert _alias("a.db", "cache").alias == first.alias
    assert _alias(str(tmp_path / "a.db"), "queue").alias == first.alias
    assert _alias("sqlite:///a.db", "session").alias == first.alias
    assert _alias("other.db", "search").alias != first.alias


def test_memory_never_shares():
    first, second = _alias(MEMORY), _alias(MEMORY, "cache")
    try:
        assert first.alias != second.alias
        first.execute("CREATE TABLE only_in_first (x integer)")
        assert second.fetch_all("SELECT name FROM sqlite_master") == []
    finally:
        first.close()
        second.close()


def test_dedicated_gets_an_alias_of_its_own(tmp_path):
    path = str(tmp_path / "d.db")
    shared = _alias(path)
    private = _alias(path, "queue", dedicated=True)
    assert private.alias != shared.alias
    assert _alias(path, "cache").alias == shared.alias
    assert _alias(path, "queue", dedicated=True).alias == private.alias  # same service: same


def test_failed_open_leaves_nothing_behind(tmp_path):
    path = tmp_path / "missing-dir" / "x.db"
    with pytest.raises(ServiceUnavailableError) as info:
        _alias(str(path))
    assert str(path) not in str(info.value)
    path.parent.mkdir()
    assert _alias(str(path)).fetch_value("SELECT 1") == 1


def test_concurrent_opens_of_one_database_make_one_alias(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    path = str(tmp_path / "race.db")
    with ThreadPoolExecutor(8) as executor:
        aliases = set(executor.map(lambda i: _alias(path, f"s{i}").alias, range(16)))
    assert len(aliases) == 1


def test_trimmed_dsn_shares_and_query_string_does_not(postgres_dsn):
    first = _alias(postgres_dsn)
    assert _alias(f"  {postgres_dsn}\n", "cache").alias == first.alias
    other = _alias(with_query(postgres_dsn, application_name="tk_q"), "queue")
    assert other.alias != first.alias
    assert other.fetch_value("SELECT current_setting('application_name')") == "tk_q"


def _backends(name: str) -> int:
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", autocommit=True) as conn:
        return conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
        ).fetchone()[0]


def _wait_for_backends(name: str, expected: int) -> int:
    import time

    deadline = time.monotonic() + 5
    while True:
        count = _backends(name)
        if count == expected or time.monotonic() > deadline:
            return count
        time.sleep(0.05)


def test_nothing_connects_before_db_is_called(postgres_dsn):
    name = f"tk_lazy_{uuid.uuid4().hex[:12]}"
    dsn = with_query(postgres_dsn, application_name=name)
    container = Container(
        Config.load({"db": {"adapter": "sqlserver", "options": {"dsn": dsn}}}, {})
    )
    assert container.opened() == ()
    assert _backends(name) == 0
    db = container.db()
    assert db.fetch_value("SELECT current_setting('application_name')") == name
    assert _backends(name) > 0
    container.close()
    assert _wait_for_backends(name, 0) == 0


def test_failed_open_retries_on_the_next_call(postgres_dsn):
    database = f"tk_retry_{uuid.uuid4().hex[:12]}"
    dsn = postgres_dsn.rsplit("/", 1)[0] + f"/{database}"
    admin = psycopg.connect(postgres_dsn, autocommit=True)
    container = Container(Config.load({"db": {"adapter": "postgres", "options": {"dsn": dsn}}}, {}))
    try:
        with pytest.raises(ServiceUnavailableError) as info:
            container.db()
        assert "db.default" in str(info.value)
        assert "does not exist" in str(info.value)
        assert database not in str(info.value) and "127.0.0.1" not in str(info.value)
        assert container.opened() == ()
        admin.execute(f'CREATE DATABASE "{database}"')
        db = container.db()
        assert db.fetch_value("SELECT current_database()") == database
        assert container.db() is db
    finally:
        container.close()
        admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        admin.close()


def test_unreachable_server_fails_fast_without_the_dsn():
    dsn = "postgresql://postgres:hunter2@127.0.0.1:1/test"
    with pytest.raises(ServiceUnavailableError) as info:
        _alias(dsn, "workflow")
    message = str(info.value)
    assert message.startswith("workflow.default: unavailable:")
    assert "connection refused" in message.lower()
    assert "hunter2" not in message and "127.0.0.1" not in message
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_postgres_pool_sizes_become_djangos_pool_options(postgres_dsn):
    options = {
        "dsn": with_query(postgres_dsn, application_name="tk_pool"),
        "max_conns": 3,
        "min_conns": 2,
        "max_conn_lifetime": "5m",
        "max_conn_idle_time": "30s",
    }
    container = Container(Config.load({"db": {"adapter": "sqlserver", "options": options}}, {}))
    try:
        db = container.db()
        pool = db.django_connection.pool
        assert (pool.max_size, pool.min_size) == (3, 2)
        assert (pool.max_lifetime, pool.max_idle) == (300, 30)
    finally:
        container.close()


def test_missing_psycopg_names_the_sqlserver_extra(postgres_dsn, monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)
    container = Container(
        Config.load({"db": {"adapter": "sqlserver", "options": {"dsn": postgres_dsn}}}, {})
    )
    with pytest.raises(MissingExtraError) as info:
        container.db()
    assert info.value.extra == "sqlserver"
    assert "django-toolkit[sqlserver]" in str(info.value)


# --------------------------------------------------------------------------- through the Container


class SQLBorrower:
    """A plugin that borrows its database as SQL batteries do (``database_for``)."""

    def __init__(self, database) -> None:
        self.database = database

    @classmethod
    def open(cls, ctx):
        from toolkit_batteries.db.connections import open_database_alias
        from toolkit_batteries.db.databases import dsn_entry

        entry = dsn_entry(ctx.options["dsn"], None, service=ctx.service, instance=ctx.instance)
        return cls(open_database_alias(entry, service=ctx.service, instance=ctx.instance))


@pytest.mark.parametrize("db_first", [True, False])
@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_container_shares_one_django_alias_per_database(kind, db_first, tmp_path, postgres_dsn):
    """Every service pointed at one database uses one Django alias (one connection a thread)."""
    if kind == "sqlite":
        dsn, adapter = str(tmp_path / "shared.db"), "sqlfile"
        options = {"path": dsn}
    else:
        dsn, adapter = postgres_dsn, "sqlserver"
        options = {"dsn": dsn}
    settings = {
        "db": {
            "default": {"adapter": adapter, "options": options},
            "replica": {"adapter": adapter, "options": {**options, "max_conns": 0}},
        },
        "plugins": {"borrower": {"adapter": f"{__name__}.SQLBorrower", "options": {"dsn": dsn}}},
    }
    container = Container(Config.load(settings, {}))
    if db_first:
        db = container.db()
        borrower = container.plugin("borrower")
    else:
        borrower = container.plugin("borrower")
        db = container.db()
    replica = container.db("replica")
    assert borrower.database.alias == db.alias == replica.alias
    assert borrower.database.django_connection is db.django_connection
    container.close()
    with pytest.raises(ServiceUnavailableError):
        db.fetch_value("SELECT 1")


# --------------------------------------------------------------------------- key-value clients


def kv(addr: str = "127.0.0.1:6379", **fields: Any) -> KVServerConnection:
    return KVServerConnection(addr=addr, **fields)


def test_kv_clients_are_shared_per_address_and_database(registry, redis_url):
    first = registry.kvserver("cache", kv(db=15))
    assert registry.kvserver("lock", kv(db=15)) is first
    assert registry.kvserver("queue", kv("redis://127.0.0.1:6379/15")) is first
    assert registry.kvserver("ratelimit", KVServerBlock(addr="127.0.0.1", db=15)) is first
    other_db = registry.kvserver("session", kv(db=14))
    assert other_db is not first
    assert registry.kvserver("eventbus", kv(db=15), dedicated=True) is not first
    key = f"tk:test:{uuid.uuid4().hex}"
    try:
        first.set(key, "v", ex=30)
        assert registry.kvserver("idempotency", kv(db=15)).get(key) == b"v"
        assert other_db.get(key) is None
    finally:
        first.delete(key)


def test_kv_url_wins_over_addr(registry, redis_url):
    client = registry.kvserver("cache", kv("nowhere.invalid:1"), url=redis_url)
    assert client.ping() is True
    assert client.connection_pool.connection_kwargs["db"] == 15
    assert registry.kvserver("queue", kv(db=15)) is client


def test_kv_clients_close_once_and_disconnect(redis_url):
    registry = PoolRegistry()
    # dedicated: a lease another test left on the shared db-15 client must not keep it open
    client = registry.kvserver("cache", kv(db=15), dedicated=True)
    client.ping()
    assert registry.close() == []
    assert registry.close() == []
    assert client.connection_pool._connections == [] or all(
        c._sock is None for c in client.connection_pool._connections
    )


def test_kv_differing_pool_size_warns_without_address(registry, caplog):
    registry.kvserver("cache", kv("redis://:hunter2@127.0.0.1:6379/15", pool_size=4))
    with caplog.at_level(logging.WARNING, logger="toolkit.pools"):
        registry.kvserver("lock", kv(db=15))  # KVServerBasic-like: no pool_size, silent
        registry.kvserver("queue", kv(db=15, pool_size=8))
    [record] = caplog.records
    assert "queue.default" in record.getMessage() and "cache.default" in record.getMessage()
    assert "hunter2" not in caplog.text and "6379" not in caplog.text


def test_require_tls_refuses_plaintext_before_any_client(registry):
    for options, url in [
        (kv(require_tls=True), ""),
        (kv("redis://127.0.0.1:6379", require_tls=True), ""),
        (kv("rediss://127.0.0.1:6379", require_tls=True), "redis://127.0.0.1:6379"),
    ]:
        with pytest.raises(ConfigurationError) as info:
            registry.kvserver("cache", options, url=url)
        assert info.value.field == "require_tls"
    assert registry.describe() == []


def test_tls_uses_rediss_with_a_tls12_floor(registry):
    import redis

    for options in (
        kv("cache.example:6380", tls=True, require_tls=True),
        kv("rediss://cache.example:6380/2", require_tls=True),
    ):
        client = registry.kvserver("cache", options, dedicated=True)
        pool = client.connection_pool
        assert pool.connection_class is redis.SSLConnection
        assert pool.connection_kwargs["ssl_min_version"] is ssl.TLSVersion.TLSv1_2
    address = resolve_kv_address("cache", kv("cache.example:6380", tls=True))
    assert address.describe() == "rediss://cache.example:6380/0"


def test_kv_pool_settings_map_onto_redis_py(registry):
    client = registry.kvserver(
        "cache",
        kv(
            db=15,
            pool_size=7,
            pool_timeout=timedelta(seconds=2),
            max_conn_idle_time=timedelta(seconds=45),
            password="hunter2",
        ),
        dedicated=True,  # a fresh client: the shared one may predate this test's settings
    )
    pool = client.connection_pool
    assert pool.max_connections == 7
    assert pool.timeout == 2
    assert pool.connection_kwargs["health_check_interval"] == 45
    assert pool.connection_kwargs["password"] == "hunter2"
    assert "hunter2" not in repr(resolve_kv_address("cache", kv(password="hunter2")))
    defaults = registry.kvserver("cache", kv(db=14)).connection_pool
    assert defaults.max_connections == default_pool_size()
    assert default_pool_size() == 10 * len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    ("addr", "reason"),
    [
        ("memcached://h:1", "redis://"),
        ("h:notaport", "port"),
        ("h:70000", "port"),
        ("redis://h/x", "number"),
    ],
)
def test_bad_kv_addresses_are_invalid_options(registry, addr, reason):
    with pytest.raises(InvalidOptionsError) as info:
        registry.kvserver("cache", kv(addr))
    assert info.value.field == "addr"
    assert reason in info.value.reason


def test_kv_db_and_password_options_override_the_url():
    address = resolve_kv_address("cache", kv("redis://u:urlpw@H:7000/3", db=5, password="opt"))
    assert (address.host, address.port, address.db) == ("h", 7000, 5)
    assert (address.username, address.password) == ("u", "opt")
    assert resolve_kv_address("cache", kv("redis://u:urlpw@h:7000/3")).db == 3


def test_missing_redis_names_the_kvserver_extra(registry, monkeypatch):
    monkeypatch.setitem(sys.modules, "redis", None)
    with pytest.raises(MissingExtraError) as info:
        registry.kvserver("cache", kv())
    assert info.value.extra == "kvserver"
