"""The adapters as Django ``CACHES`` backends, used through ``django.core.cache.caches``."""

from __future__ import annotations

import re
import threading

import pytest
from django.core.cache import caches, close_caches
from django.test import override_settings

from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError

from .helpers import drop_table, unique

MEMORY = "toolkit_batteries.cache.backends.MemoryCache"
KVSERVER = "toolkit_batteries.cache.backends.KVServerCache"
DB = "toolkit_batteries.cache.backends.DBCache"


def in_other_thread(func):
    """Run ``func`` on another thread (Django gives each thread its own backend object)."""
    box: list = []
    thread = threading.Thread(target=lambda: box.append(func()))
    thread.start()
    thread.join()
    return box[0]


def settings_with(alias: str, entry: dict) -> dict:
    return {"default": {"BACKEND": MEMORY, "LOCATION": unique()}, alias: entry}


def test_memory_backend_shares_its_store_across_threads_and_survives_close():
    entry = {"BACKEND": MEMORY, "LOCATION": unique(), "OPTIONS": {"MAX_ENTRIES": 5}}
    with override_settings(CACHES=settings_with("mem", entry)):
        cache = caches["mem"]
        cache.set("k", {"v": 1}, timeout=60)
        other = in_other_thread(lambda: caches["mem"])
        assert other is not cache
        assert in_other_thread(lambda: caches["mem"].get("k")) == {"v": 1}
        assert cache.max_entries == 5
        close_caches()  # what Django does after every request
        assert cache.get("k") == {"v": 1}


def test_kvserver_backend_through_django_caches(redis_url):
    prefix = unique()
    entry = {"BACKEND": KVSERVER, "LOCATION": redis_url, "KEY_PREFIX": prefix, "TIMEOUT": 60}
    with override_settings(CACHES=settings_with("kv", entry)):
        cache = caches["kv"]
        try:
            cache.set("k", [1, 2])
            assert cache.get("k") == [1, 2]
            cache.set("n", 1)
            assert cache.incr("n") == 2
            assert cache.namespace == f"toolkit:cache:django:{prefix}:"
            assert 59_000 < cache.ttl_ms("k") <= 60_000  # TIMEOUT is the default
            close_caches()
            assert cache.get("k") == [1, 2]
            other = in_other_thread(lambda: caches["kv"])
            assert other._client is cache._client  # one client per server, process-wide
        finally:
            cache.clear()


def test_kvserver_backend_clear_spares_other_prefixes(redis_url):
    a, b = unique(), unique()
    entries = {
        "default": {"BACKEND": MEMORY, "LOCATION": unique()},
        "a": {"BACKEND": KVSERVER, "LOCATION": redis_url, "KEY_PREFIX": a},
        "b": {"BACKEND": KVSERVER, "LOCATION": redis_url, "KEY_PREFIX": b},
    }
    with override_settings(CACHES=entries):
        try:
            caches["a"].set("k", "a")
            caches["b"].set("k", "b")
            caches["a"].clear()
            assert caches["a"].get("k") is None and caches["b"].get("k") == "b"
        finally:
            caches["b"].clear()


def test_kvserver_backend_options_are_strict_and_named():
    entry = {
        "BACKEND": KVSERVER,
        "LOCATION": "redis://127.0.0.1:6379/15",
        "OPTIONS": {"pool_sise": 3},
    }
    expected = re.escape('unknown option "pool_sise" (did you mean "pool_size"?)')
    with (
        override_settings(CACHES=settings_with("kv", entry)),
        pytest.raises(ConfigurationError, match=expected),
    ):
        caches["kv"]


def test_kvserver_backend_takes_one_server_only():
    entry = {"BACKEND": KVSERVER, "LOCATION": ["redis://a:6379", "redis://b:6379"]}
    with (
        override_settings(CACHES=settings_with("kv", entry)),
        pytest.raises(InvalidOptionsError, match='"LOCATION" must name one server'),
    ):
        caches["kv"]


def test_db_backend_with_a_dsn(postgres_dsn):
    table = unique("tk_cache_")
    entry = {"BACKEND": DB, "LOCATION": table, "OPTIONS": {"dsn": postgres_dsn}}
    with override_settings(CACHES=settings_with("sql", entry)):
        cache = caches["sql"]
        try:
            cache.set("k", {"v": 1})
            assert cache.get("k") == {"v": 1}
            assert cache.table_name == table
            close_caches()
            assert in_other_thread(lambda: caches["sql"].get("k")) == {"v": 1}
        finally:
            drop_table(cache._db(), table)


def test_db_backend_without_a_dsn_follows_the_db_service(tmp_path):
    table = unique("tk_cache_")
    toolkit = {"db": {"adapter": "sqlfile", "options": {"path": str(tmp_path / "app.db")}}}
    entry = {"BACKEND": DB, "LOCATION": table}
    with override_settings(TOOLKIT=toolkit, CACHES=settings_with("sql", entry)):
        from toolkit_batteries import services

        cache = caches["sql"]
        cache.set("k", "v")
        assert cache._db() is services.db()
        assert services.db().fetch_value(f"SELECT count(*) FROM {table}") == 1


def test_db_backend_refuses_a_bad_table_name():
    entry = {"BACKEND": DB, "LOCATION": "bad name; --"}
    with (
        override_settings(CACHES=settings_with("sql", entry)),
        pytest.raises(InvalidOptionsError, match='"LOCATION" must be the table name'),
    ):
        caches["sql"]
