"""Django holds the cache: ``services.cache()`` is ``caches["default"]`` on every adapter.

``CACHES`` is derived from ``TOOLKIT`` with ``django_cache_settings``; Django's own
machinery (``cache_page``, DRF throttles) then uses the configured cache, on the real
Redis server for kvserver.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import redis
from django.core.cache import caches, close_caches
from django.http import HttpResponse
from django.test import RequestFactory, override_settings
from django.views.decorators.cache import cache_page
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle
from rest_framework.views import APIView

from toolkit_batteries import services
from toolkit_batteries.cache import django_cache_settings
from toolkit_batteries.core.errors import ConfigurationError

from .helpers import unique

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(params=["memory", "kvserver", "db-sqlite", "db-postgres"])
def toolkit(request: pytest.FixtureRequest) -> dict:
    """Return a TOOLKIT whose default cache is the parametrized adapter."""
    if request.param == "memory":
        block: dict = {"adapter": "memory"}
    elif request.param == "kvserver":
        block = {"adapter": "kvserver", "options": {"url": request.getfixturevalue("redis_url")}}
    elif request.param == "db-sqlite":
        block = {"adapter": "db", "options": {"dsn": request.getfixturevalue("sqlite_dsn")}}
    else:
        block = {"adapter": "db", "options": {"dsn": request.getfixturevalue("postgres_dsn")}}
    return {"cache": block}


def derived(toolkit: dict, prefix: str) -> dict:
    return django_cache_settings(toolkit, overrides={"default": {"KEY_PREFIX": prefix}})


def in_other_thread(func):
    box: list = []
    thread = threading.Thread(target=lambda: box.append(func()))
    thread.start()
    thread.join()
    return box[0]


def test_services_cache_is_djangos_default_cache_and_shares_its_values(toolkit):
    with override_settings(TOOLKIT=toolkit, CACHES=derived(toolkit, unique())):
        cache = services.cache()
        try:
            assert cache is caches["default"]
            assert cache.adapter_name == toolkit["cache"]["adapter"]
            cache.set("k", 1)
            assert caches["default"].get("k") == 1
            caches["default"].set("from-django", {"v": 2})
            assert services.cache().get("from-django") == {"v": 2}
            # Django builds one object per thread; they share one store.
            assert in_other_thread(lambda: caches["default"].get("k")) == 1
            close_caches()  # what Django does after every request
            assert services.cache().get("k") == 1
        finally:
            cache.clear()


def test_a_script_container_builds_the_class_itself_and_registers_nothing(toolkit):
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    name = unique()
    before = dict(caches.settings)
    container = Container(Config.load({"cache": {name: toolkit["cache"]}}, {}))
    cache = container.cache(name)
    try:
        assert dict(caches.settings) == before  # Django's handler was not extended
        assert cache is container.cache(name)
        assert type(cache).__name__ == {"memory": "MemoryCache", "kvserver": "KVServerCache"}.get(
            toolkit["cache"]["adapter"], type(cache).__name__
        )
        cache.set("k", "v")
        assert container.cache(name).get("k") == "v"
    finally:
        cache.clear()
        container.close()


def test_a_script_without_django_settings_builds_the_same_classes(tmp_path, redis_url):
    code = (
        "import json\n"
        "from toolkit_batteries.core.config import Config\n"
        "from toolkit_batteries.core.container import Container\n"
        "from django.core.cache import caches\n"
        f"c = Container(Config.load({{'cache': {{'default': {{'adapter': 'memory'}},\n"
        f"    'kv': {{'adapter': 'kvserver', 'options': {{'url': {redis_url!r}}}}}}}}}, {{}}))\n"
        "c.cache().set('k', 5)\n"
        "kv = c.cache('kv')\n"
        "print(json.dumps({'registered': sorted(caches.settings), 'value': c.cache().get('k'),\n"
        "    'same': c.cache() is c.cache(),\n"
        "    'kv': type(kv).__module__ + '.' + type(kv).__name__}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "registered": ["default"],  # Django's own default; nothing added at run time
        "same": True,
        "value": 5,
        "kv": "toolkit_batteries.cache.adapters.kvserver.KVServerCache",
    }


def test_setting_changed_resets_the_cache(redis_url):
    first_toolkit = {"cache": {"adapter": "memory"}}
    second_toolkit = {"cache": {"adapter": "kvserver", "options": {"url": redis_url}}}
    prefix = unique()
    with override_settings(TOOLKIT=first_toolkit, CACHES=derived(first_toolkit, prefix)):
        first = services.cache()
        assert first is caches["default"]
        with override_settings(TOOLKIT=second_toolkit, CACHES=derived(second_toolkit, prefix)):
            second = services.cache()
            assert second is caches["default"] and second is not first
            assert second.adapter_name == "kvserver"
        assert services.cache() is caches["default"]
        assert services.cache().adapter_name == "memory"


def test_a_container_held_cache_survives_a_caches_reset():
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    name = unique()
    container = Container(Config.load({"cache": {name: {"adapter": "memory"}}}, {}))
    before = container.cache(name)
    before.set("k", 1)
    with override_settings(
        CACHES={"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
    ):
        after = container.cache(name)  # no alias of Django's held it: CACHES is not its registry
        assert after is before and after.instance == name
        assert container.cache(name).get("k") == 1
    container.close()


@pytest.fixture
def redis_default(redis_url):
    """Derive settings whose default cache is kvserver on the real Redis, unique prefix."""
    toolkit = {"cache": {"adapter": "kvserver", "options": {"url": redis_url}}}
    prefix = unique()
    raw = redis.Redis.from_url(redis_url)
    pattern = f"toolkit:cache:default:{prefix}:*"
    with override_settings(TOOLKIT=toolkit, CACHES=derived(toolkit, prefix)):
        yield raw, pattern
    for key in raw.scan_iter(match=pattern):
        raw.delete(key)
    raw.close()


def test_cache_page_uses_the_configured_kvserver_cache(redis_default):
    raw, pattern = redis_default
    calls: list[int] = []

    @cache_page(60)
    def view(request):
        calls.append(1)
        return HttpResponse(f"rendered {len(calls)}")

    factory = RequestFactory()
    first = view(factory.get("/cached/"))
    second = view(factory.get("/cached/"))
    assert first.content == second.content == b"rendered 1"
    assert len(calls) == 1
    stored = [key.decode() for key in raw.scan_iter(match=pattern)]
    assert any("views.decorators.cache.cache_page" in key for key in stored)


class TwoPerMinute(AnonRateThrottle):
    rate = "2/min"


class ThrottledView(APIView):
    authentication_classes: list = []
    permission_classes: list = []
    throttle_classes = [TwoPerMinute]

    def get(self, request):
        return Response({"ok": True})


def test_a_drf_throttle_counts_in_the_configured_kvserver_cache(redis_default):
    raw, pattern = redis_default
    factory = RequestFactory()
    view = ThrottledView.as_view()
    codes = [view(factory.get("/throttled/", REMOTE_ADDR="10.9.8.7")).status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    stored = [key.decode() for key in raw.scan_iter(match=pattern)]
    assert [key for key in stored if key.endswith("throttle_anon_10.9.8.7")], stored
    assert len(services.cache().get("throttle_anon_10.9.8.7")) == 2


def test_django_options_are_settable_through_overrides(redis_url):
    toolkit = {"cache": {"adapter": "kvserver", "options": {"url": redis_url, "pool_size": 4}}}
    caches_setting = django_cache_settings(
        toolkit, overrides={"default": {"TIMEOUT": 60, "KEY_PREFIX": "web", "VERSION": 3}}
    )
    assert caches_setting["default"] == {
        "BACKEND": "toolkit_batteries.cache.adapters.kvserver.KVServerCache",
        "LOCATION": "default",
        "OPTIONS": {"url": redis_url, "pool_size": 4},
        "TIMEOUT": 60,
        "KEY_PREFIX": "web",
        "VERSION": 3,
    }
    with override_settings(TOOLKIT=toolkit, CACHES=caches_setting):
        cache = services.cache()
        assert cache is caches["default"]
        assert (cache.default_timeout, cache.key_prefix, cache.version) == (60, "web", 3)
    with pytest.raises(ConfigurationError, match="OPTIONS"):
        django_cache_settings(toolkit, overrides={"default": {"OPTIONS": {}}})
    with pytest.raises(ConfigurationError, match='"nope"'):
        django_cache_settings(toolkit, overrides={"nope": {"TIMEOUT": 1}})


def test_every_instance_gets_an_alias_and_db_borrows_the_db_services_alias():
    toolkit = {
        "cache": {
            "default": {"adapter": "redis", "options": {"url": "redis://cache:6379/1"}},
            "local": {"adapter": "memory", "options": {"max_entries": 50}},
            "sql": {"adapter": "db"},
        }
    }
    assert django_cache_settings(toolkit) == {
        "default": {
            "BACKEND": "toolkit_batteries.cache.adapters.kvserver.KVServerCache",
            "LOCATION": "default",
            "OPTIONS": {"url": "redis://cache:6379/1"},
        },
        "local": {
            "BACKEND": "toolkit_batteries.cache.adapters.memory.MemoryCache",
            "LOCATION": "local",
            "OPTIONS": {"max_entries": 50},
        },
        "sql": {
            "BACKEND": "toolkit_batteries.cache.adapters.db.DBCache",
            "LOCATION": "sql",
            "OPTIONS": {"database": "default"},
        },
    }


def test_hand_written_entries_are_strict_and_take_a_server_location(redis_url):
    kv = "toolkit_batteries.cache.adapters.kvserver.KVServerCache"
    bad = {"default": {"BACKEND": kv, "LOCATION": "x", "OPTIONS": {"pool_sise": 3}}}
    expected = 'unknown option "pool_sise" (did you mean "pool_size"?)'
    with override_settings(CACHES=bad), pytest.raises(ConfigurationError) as caught:
        caches["default"]
    assert expected in str(caught.value)
    prefix = unique()
    server = {"default": {"BACKEND": kv, "LOCATION": redis_url, "KEY_PREFIX": prefix}}
    with override_settings(CACHES=server):
        cache = caches["default"]
        try:
            cache.set("k", [1])
            assert cache.get("k") == [1]
            assert cache.namespace == f"toolkit:cache:django:{prefix}:"
        finally:
            cache.clear()
