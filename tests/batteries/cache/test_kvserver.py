"""The kvserver adapter on real Redis: namespacing, encoding, TTLs, connection rules, faults."""

from __future__ import annotations

import time

import pytest
import redis

from toolkit_batteries.cache.adapters.kvserver import KVServerCache, glob_escape
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError

from .helpers import PrivateRedis, unique


@pytest.fixture
def kv(redis_url):
    """Open a kvserver cache under a unique instance; clear its namespace afterwards."""
    opened: list[tuple[Container, KVServerCache]] = []

    def open_cache(instance: str | None = None, **options) -> KVServerCache:
        name = instance or unique()
        block = {"adapter": "kvserver", "options": {"url": redis_url, **options}}
        container = Container(Config.load({"cache": {name: block}}, {}))
        cache = container.cache(name)
        opened.append((container, cache))
        return cache

    yield open_cache
    for container, cache in opened:
        cache.clear()
        container.close()


def test_keys_live_under_the_instance_namespace(kv, raw):
    cache = kv()
    cache.set("k", "v")
    assert cache.namespace == f"toolkit:cache:{cache.instance}:"
    assert raw.exists(f"toolkit:cache:{cache.instance}::1:k") == 1


def test_integers_are_stored_as_text_and_other_values_pickled(kv, raw):
    cache = kv()
    cache.set_many({"n": 42, "b": True, "s": "text"})
    prefix = cache.namespace + ":1:"
    assert raw.get(prefix + "n") == b"42"
    assert raw.get(prefix + "b")[:1] == b"\x80"  # bool is not stored as an integer
    assert raw.get(prefix + "s")[:1] == b"\x80"
    assert raw.incrby(prefix + "n", 1) == 43  # the server sees a plain integer
    assert cache.get("n") == 43 and cache.get("b") is True


def test_expiry_is_set_on_the_server_in_milliseconds(kv):
    cache = kv()
    cache.set("long", 1, timeout=30)
    cache.set("fraction", 1, timeout=1.5)
    cache.set("forever", 1, timeout=None)
    assert 29_000 < cache.ttl_ms("long") <= 30_000
    assert 1_000 < cache.ttl_ms("fraction") <= 1_500
    assert cache.ttl_ms("forever") is None
    assert cache.ttl_ms("absent") is None
    cache.incr("long")
    assert cache.ttl_ms("long") > 29_000  # incr keeps the expiry
    cache.touch("forever", 10)
    assert 9_000 < cache.ttl_ms("forever") <= 10_000


def test_clear_spares_keys_outside_the_namespace(kv, raw):
    cache = kv()
    outside = f"{unique('outside-')}:1:k"
    raw.set(outside, "keep", ex=60)
    try:
        cache.set("k", "v")
        cache.clear()
        assert cache.get("k") is None
        assert raw.get(outside) == b"keep"
    finally:
        raw.delete(outside)


def test_clear_escapes_glob_characters_in_the_namespace(kv):
    tag = unique("")
    special = kv(instance=f"x[1]*{tag}")
    # The unescaped pattern "toolkit:cache:x[1]*<tag>:*" would match this namespace too.
    neighbour = kv(instance=f"x1-{tag}")
    neighbour.set("k", "neighbour")
    special.set("k", "mine")
    special.clear()
    assert special.get("k") is None
    assert neighbour.get("k") == "neighbour"
    assert glob_escape("a*b?[c]\\") == "a\\*b\\?\\[c\\]\\\\"


def test_clear_deletes_many_keys_in_batches(kv):
    cache = kv()
    cache.set_many({f"k{i}": i for i in range(1200)})
    cache.clear()
    assert cache.get_many([f"k{i}" for i in range(1200)]) == {}


def test_url_wins_over_addr(kv):
    cache = kv(addr="127.0.0.1:1")
    cache.set("k", "v")
    assert cache.get("k") == "v"


def test_require_tls_is_refused_before_connecting(redis_url):
    container = Container(
        Config.load(
            {"cache": {"adapter": "kvserver", "options": {"url": redis_url, "require_tls": True}}},
            {},
        )
    )
    with pytest.raises(InvalidOptionsError, match='"require_tls"'):
        container.cache()
    assert container.pools.describe() == []  # no client was built
    container.close()


def test_tls_uses_a_tls_1_2_floor(redis_url):
    import ssl

    container = Container(
        Config.load(
            {"cache": {"adapter": "kvserver", "options": {"addr": "127.0.0.1:6390", "tls": True}}},
            {},
        )
    )
    cache = container.cache()
    pool = cache.client.get_client().connection_pool
    assert pool.connection_class is redis.SSLConnection
    assert pool.connection_kwargs["ssl_min_version"] is ssl.TLSVersion.TLSv1_2
    assert cache.target.startswith("rediss://")
    container.close()


def test_password_stays_out_of_repr_and_errors():
    secret = "s3cret-pw"
    container = Container(
        Config.load(
            {
                "cache": {
                    "adapter": "kvserver",
                    "options": {"url": f"redis://:{secret}@127.0.0.1:1/0"},
                }
            },
            {},
        )
    )
    cache = container.cache()
    assert secret not in repr(cache)
    with pytest.raises(ServiceUnavailableError) as caught:
        cache.get("k")
    assert secret not in str(caught.value) and "127.0.0.1" not in str(caught.value)
    container.close()


def test_instances_on_one_server_share_one_client(redis_url):
    a, b = unique(), unique()
    block = {"adapter": "kvserver", "options": {"url": redis_url}}
    container = Container(
        Config.load(
            {
                "cache": {
                    a: block,
                    b: block,
                    "own": {**block, "options": {"url": redis_url, "dedicated_pool": True}},
                }
            },
            {},
        )
    )
    first, second, own = container.cache(a), container.cache(b), container.cache("own")
    assert first.client.get_client() is second.client.get_client()
    assert own.client.get_client() is not first.client.get_client()
    from toolkit_batteries.core.kvclient import clients

    assert clients.leases(first.client.get_client()) >= 2  # one lease per backend object
    # Leased once, by the backend: the container leases nothing more for a cache.
    assert container.pools.describe() == []
    container.close()


def test_unreachable_server_fails_fast_and_recovers(tmp_path):
    server = PrivateRedis(tmp_path)
    server.start()
    container = Container(
        Config.load({"cache": {"adapter": "kvserver", "options": {"url": server.url}}}, {})
    )
    cache = container.cache()
    try:
        cache.set("k", "v")
        assert cache.get("k") == "v"
        server.kill()
        started = time.monotonic()
        with pytest.raises(ServiceUnavailableError, match=r"cache\.default: unavailable") as caught:
            cache.get("k")
        with pytest.raises(ServiceUnavailableError):
            cache.set("k", "v")
        with pytest.raises(ServiceUnavailableError):
            cache.incr("k")
        assert time.monotonic() - started < 2.0
        assert str(server.port) not in str(caught.value)
        server.start()
        cache.set("k", "again")  # reconnects on its own
        assert cache.get("k") == "again"
    finally:
        container.close()
        server.kill()
