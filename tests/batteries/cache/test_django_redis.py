"""The ``kvserver`` cache is django-redis's ``RedisCache``, on the pool every Redis battery shares.

On the real Redis server: ``caches["default"]`` derived by ``slots.caches(TOOLKIT)`` is a
``django_redis.cache.RedisCache``; ``get_redis_connection("default")`` answers PING and
is the client the cache writes with; django-redis's own methods see the toolkit's
entries (one namespace, one serializer); a lock, a queue push and a cache set on one
server use one connection pool, counted on the server (``CLIENT LIST``); and every Redis
battery (lock, queue, ratelimit, idempotency, session, eventbus, resilience) holds that
very client.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import redis
from django.core.cache import caches
from django.test import override_settings
from django_redis import get_redis_connection
from django_redis.cache import RedisCache

from toolkit_batteries import services, slots

#: A database index no other test of this process uses, so its connections are countable.
POOL_DB = 13


def _toolkit(url: str, prefix: str) -> dict:
    return {
        "cache": {"adapter": "kvserver", "options": {"url": url}},
        "lock": {"adapter": "kvserver", "options": {"url": url, "prefix": prefix}},
        "queue": {"adapter": "kvserver", "options": {"url": url, "prefix": prefix}},
    }


@pytest.fixture
def on_redis(redis_url) -> Iterator[tuple[str, redis.Redis]]:
    """Derive CACHES from a kvserver TOOLKIT on database POOL_DB; clean up afterwards."""
    url = redis_url.rsplit("/", 1)[0] + f"/{POOL_DB}"
    prefix = f"t-pool-{uuid.uuid4().hex}:"
    toolkit = _toolkit(url, prefix)
    raw = redis.Redis.from_url(url)
    with override_settings(TOOLKIT=toolkit, CACHES=slots.caches(toolkit)):
        try:
            yield url, raw
        finally:
            caches["default"].clear()
            services.reset()
            keys = list(raw.scan_iter(match=f"{prefix}*", count=500))
            if keys:
                raw.delete(*keys)
            raw.close()


def test_the_kvserver_cache_is_a_django_redis_cache(on_redis):
    cache = caches["default"]
    assert isinstance(cache, RedisCache)
    assert get_redis_connection("default").ping() is True
    assert services.cache() is cache


def test_django_redis_methods_see_the_toolkit_entries(on_redis):
    cache = caches["default"]
    cache.set("greeting", {"text": "hello"}, 30)
    assert cache.client.get("greeting") == {"text": "hello"}  # same key, same serializer
    assert 0 < cache.ttl("greeting") <= 30
    assert list(cache.keys("greet*")) == ["greeting"]
    _, raw = on_redis
    with cache.lock("critical", timeout=5):
        assert raw.exists("toolkit:cache:default::1:critical") == 1  # under the namespace
    cache.clear()  # the toolkit's namespaced clear, not django-redis's FLUSHDB
    assert cache.get("greeting") is None


def test_clear_removes_this_cache_only(on_redis):
    _, raw = on_redis
    raw.set("someone-elses-key", b"kept")
    try:
        caches["default"].set("mine", 1)
        caches["default"].clear()
        assert raw.get("someone-elses-key") == b"kept"
    finally:
        raw.delete("someone-elses-key")


def _toolkit_connections(raw: redis.Redis) -> int:
    """Return how many connections of this process sit on database POOL_DB."""
    name = f"toolkit-{os.getpid()}"
    return sum(
        1 for c in raw.client_list() if c.get("name") == name and int(c.get("db", -1)) == POOL_DB
    )


def test_a_lock_a_queue_push_and_a_cache_set_share_one_connection_pool(on_redis):
    _, raw = on_redis
    before = _toolkit_connections(raw)
    lease = services.lock().acquire("shared-pool", ttl=10)
    assert lease is not None
    services.queue().push("shared-pool", b"body")
    caches["default"].set("shared-pool", "v", 10)
    assert get_redis_connection("default").ping() is True
    lease.release()
    assert get_redis_connection("default") is services.lock()._client
    # One after another on one thread: one pool holds one connection for all four.
    assert _toolkit_connections(raw) - before == 1


def test_a_hand_written_django_redis_entry_can_share_the_pool(on_redis):
    url, _ = on_redis
    plain = {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": url,
        "OPTIONS": {
            "CONNECTION_FACTORY": "toolkit_batteries.core.kvclient.SharedConnectionFactory"
        },
    }
    with override_settings(CACHES={"default": caches.settings["default"], "plain": plain}):
        caches["plain"].set("hand-written", 1, 10)
        assert caches["plain"].get("hand-written") == 1
        assert get_redis_connection("plain") is services.lock()._client
        caches["plain"].delete("hand-written")


#: The batteries issue 24 names as users of the one Redis client registry.
KV_BATTERIES = ("lock", "queue", "ratelimit", "idempotency", "session", "eventbus", "resilience")


def _redis_clients(obj: object, depth: int = 2) -> list[redis.Redis]:
    """Return the ``redis.Redis`` objects ``obj`` holds (itself or one toolkit object down)."""
    attrs = dict(getattr(obj, "__dict__", {}))
    for name in getattr(type(obj), "__slots__", ()):
        if hasattr(obj, name):
            attrs[name] = getattr(obj, name)
    found = []
    for value in attrs.values():
        if isinstance(value, redis.Redis):
            found.append(value)
        elif depth and type(value).__module__.startswith("toolkit_batteries."):
            found += _redis_clients(value, depth - 1)
    return found


def test_every_redis_battery_borrows_the_django_redis_client(redis_url):
    """One variable, TOOLKIT_REDIS_URL, and all seven batteries hold the cache's client."""
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    url = redis_url.rsplit("/", 1)[0] + f"/{POOL_DB}"
    toolkit = {name: {"adapter": "kvserver"} for name in ("cache", *KV_BATTERIES)}
    toolkit["resilience"]["options"] = {"breaker": {"enabled": True}}  # its client's user
    config = Config.load(toolkit, {"TOOLKIT_REDIS_URL": url})
    with override_settings(TOOLKIT=toolkit, CACHES=slots.caches(config)):
        connection = get_redis_connection("default")
        container = Container(config)
        try:
            held = {name: _redis_clients(getattr(container, name)()) for name in KV_BATTERIES}
        finally:
            container.close()
            services.reset()
    assert all(held.values()), held  # each holds a client...
    strangers = {name for name, found in held.items() if any(c is not connection for c in found)}
    assert strangers == set()  # ...and it is django-redis's, for every one of them
