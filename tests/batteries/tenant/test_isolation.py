"""Tenant isolation: what tenant A caches, tenant B never sees (memory and real Redis).

``caches["default"]`` is the cache battery's backend with
``KEY_FUNCTION = "toolkit_batteries.tenant.cache_key_function"``, on the ``memory``
adapter and on the ``kvserver`` adapter against the real Redis server (database 15).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client, override_settings

from toolkit_batteries.tenant import cache_key_function, tenant_prefix, using_tenant

from ..cache.helpers import unique
from .conftest import configured

KEY_FUNCTION = "toolkit_batteries.tenant.cache_key_function"


def cache_entry(variant: str, request: pytest.FixtureRequest, instance: str) -> dict[str, Any]:
    if variant == "memory":
        backend, options = "toolkit_batteries.cache.adapters.memory.MemoryCache", {}
    else:
        backend = "toolkit_batteries.cache.adapters.kvserver.KVServerCache"
        options = {"url": request.getfixturevalue("redis_url")}
    return {
        "BACKEND": backend,
        "LOCATION": instance,
        "OPTIONS": options,
        "KEY_FUNCTION": KEY_FUNCTION,
    }


@pytest.fixture(params=["memory", "kvserver"])
def cache(request: pytest.FixtureRequest) -> Iterator[Any]:
    instance = unique("tenant-")
    with override_settings(CACHES={"default": cache_entry(request.param, request, instance)}):
        backend = caches["default"]
        backend.variant = request.param
        try:
            yield backend
        finally:
            backend.clear()


def test_a_value_cached_under_tenant_a_is_invisible_to_tenant_b(cache: Any) -> None:
    with using_tenant("acme"):
        cache.set("plan", "gold", 30)
        assert cache.get("plan") == "gold"
    with using_tenant("globex"):
        assert cache.get("plan") is None
        assert cache.has_key("plan") is False
        cache.set("plan", "free", 30)
    with using_tenant("acme"):
        assert cache.get("plan") == "gold"
        cache.delete("plan")
    with using_tenant("globex"):
        assert cache.get("plan") == "free"  # acme's delete did not reach globex
    assert cache.get("plan") is None  # nor is either visible outside any tenant


def test_many_and_counters_are_per_tenant(cache: Any) -> None:
    with using_tenant("acme"):
        cache.set_many({"a": 1, "b": 2}, 30)
        cache.set("hits", 0, 30)
        cache.incr("hits", 5)
    with using_tenant("globex"):
        assert cache.get_many(["a", "b"]) == {}
        assert cache.add("hits", 100, 30) is True  # free for globex
    with using_tenant("acme"):
        assert cache.get_many(["a", "b"]) == {"a": 1, "b": 2}
        assert cache.get("hits") == 5


def test_the_stored_key_carries_the_tenant(cache: Any, request: pytest.FixtureRequest) -> None:
    with using_tenant("acme"):
        cache.set("plan", "gold", 30)
        made = cache.make_key("plan")
    assert made == ":1:acme:plan"
    if cache.variant == "kvserver":
        import redis

        raw = redis.Redis.from_url(request.getfixturevalue("redis_url"))
        try:
            assert raw.exists(cache.namespace + ":1:acme:plan") == 1
            assert raw.exists(cache.namespace + ":1:globex:plan") == 0
        finally:
            raw.close()


def test_isolation_through_the_middleware(cache: Any) -> None:
    with configured("header"):
        client = Client()
        response = client.post("/whoami", {"plan": "gold"}, headers={"X-Tenant-ID": "acme"})
        assert response.status_code == 200 and response.json()["cached"] == "gold"
        again = client.get("/whoami", headers={"X-Tenant-ID": "acme"})
        assert again.json()["cached"] == "gold"
        other = client.get("/whoami", headers={"X-Tenant-ID": "globex"})
        assert other.status_code == 200 and other.json()["cached"] is None
    with using_tenant("acme"):
        caches["default"].delete("plan")


def test_key_function_and_prefix_helpers() -> None:
    assert cache_key_function("k", "web", 2) == "web:2:-:k"
    assert tenant_prefix() == "-" and tenant_prefix("media") == "media/-"
    with using_tenant("acme"):
        assert cache_key_function("k", "web", 2) == "web:2:acme:k"
        assert tenant_prefix() == "acme"
        assert tenant_prefix("jobs", ":") == "jobs:acme"
        with using_tenant(None):
            assert tenant_prefix() == "-"
    with pytest.raises(ValueError) as caught, using_tenant("no good"):
        pass
    assert "no good" not in str(caught.value)
