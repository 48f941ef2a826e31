"""One contract for every cache adapter: Django's cache API gives the same results on each.

Runs against memory, kvserver (real Redis), db on SQLite and db on real PostgreSQL.
"""

from __future__ import annotations

import asyncio
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.cache.backends.base import BaseCache, CacheKeyWarning

from toolkit_batteries.cache import Cache
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container, ContainerClosedError

#: A lifetime the steps a test takes before it ends beat even on a loaded two-core machine
#: (the kvserver variant waits on Redis's real clock; the others move a fake clock), and a
#: wait that outlasts it. Sub-300 ms lifetimes flaked there: a set, then a get or touch
#: that had to land before the expiry, could come late.
SHORT = 1.0
PAST_SHORT = 1.1

VALUES = [
    "text",
    "ünïcødé ✓",
    "",
    0,
    -7,
    2**70,
    3.5,
    True,
    None,
    b"\x00\xffbytes",
    [1, "two", [3]],
    {"nested": {"list": [1, 2], "none": None}},
    (1, 2),
    {1, 2, 3},
]


def run_threads(count: int, target) -> list:
    """Run ``target(i)`` on ``count`` threads released together; return the results."""
    barrier = threading.Barrier(count)

    def worker(i: int):
        barrier.wait()
        return target(i)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(worker, range(count)))


class TestCacheContract:
    """The same calls, the same answers, on every adapter."""

    def test_identity(self, opened):
        cache = opened.cache
        assert isinstance(cache, BaseCache) and isinstance(cache, Cache)
        assert cache.adapter_name == opened.variant.split("-")[0]
        assert cache.service_name == "cache" and cache.instance == opened.instance
        assert opened.container.cache(opened.instance) is cache

    def test_round_trip(self, opened):
        for value in VALUES:
            opened.cache.set("k", value)
            assert opened.cache.get("k", "missing") == value
            assert type(opened.cache.get("k")) is type(value)
        opened.cache.set_many({f"k{i}": value for i, value in enumerate(VALUES)})
        assert opened.cache.get_many([f"k{i}" for i in range(len(VALUES))]) == {
            f"k{i}": value for i, value in enumerate(VALUES)
        }

    def test_one_megabyte_value(self, opened):
        big = "x" * 1_048_576
        opened.cache.set("big", big)
        assert opened.cache.get("big") == big

    def test_missing_key_gives_the_default(self, opened):
        assert opened.cache.get("absent") is None
        assert opened.cache.get("absent", "fallback") == "fallback"
        assert opened.cache.has_key("absent") is False
        assert "absent" not in opened.cache

    def test_values_are_copies(self, opened):
        original = {"items": [1, 2]}
        opened.cache.set("k", original)
        original["items"].append(3)
        fetched = opened.cache.get("k")
        fetched["items"].append(4)
        assert opened.cache.get("k") == {"items": [1, 2]}

    def test_set_overwrites(self, opened):
        opened.cache.set("k", 1)
        opened.cache.set("k", "two")
        assert opened.cache.get("k") == "two"

    def test_add_only_when_absent(self, opened):
        cache = opened.cache
        assert cache.add("k", "first") is True
        assert cache.add("k", "second") is False
        assert cache.get("k") == "first"

    def test_add_replaces_an_expired_entry(self, opened):
        cache = opened.cache
        # No step has to beat this lifetime (only the wait, which lasts at least 0.25 s,
        # has to outlast it), so it stays short.
        assert cache.add("k", "old", timeout=0.2)
        opened.elapse(0.25)
        assert cache.add("k", "new", timeout=30) is True
        assert cache.get("k") == "new"

    def test_concurrent_add_has_one_winner(self, opened):
        results = run_threads(16, lambda i: opened.cache.add("race", i))
        assert results.count(True) == 1
        assert opened.cache.get("race") == results.index(True)

    def test_delete_tells_whether_it_existed(self, opened):
        opened.cache.set("k", "v")
        assert opened.cache.delete("k") is True
        assert opened.cache.delete("k") is False
        assert opened.cache.get("k") is None

    def test_many(self, opened):
        cache = opened.cache
        assert cache.set_many({"a": 1, "b": [2], "c": "three"}) == []
        assert cache.get_many(["a", "b", "missing", "c"]) == {"a": 1, "b": [2], "c": "three"}
        cache.delete_many(["a", "c", "missing"])
        assert cache.get_many(["a", "b", "c"]) == {"b": [2]}
        assert cache.get_many([]) == {}
        assert cache.set_many({}) == []
        cache.delete_many([])

    def test_get_many_over_one_chunk(self, opened):
        data = {f"key{i}": i for i in range(700)}  # > one SQL IN-list chunk, < max_entries
        opened.cache.set_many(data)
        assert opened.cache.get_many(list(data)) == data

    def test_incr_and_decr(self, opened):
        cache = opened.cache
        cache.set("n", 10)
        assert cache.incr("n") == 11
        assert cache.incr("n", 5) == 16
        assert cache.decr("n", 20) == -4
        assert cache.get("n") == -4

    def test_incr_of_a_missing_key_raises(self, opened):
        with pytest.raises(ValueError, match="not found"):
            opened.cache.incr("absent")
        with pytest.raises(ValueError, match="not found"):
            opened.cache.decr("absent")
        assert opened.cache.get("absent") is None  # incr never creates the key

    def test_incr_beyond_64_bits_and_of_floats(self, opened):
        cache = opened.cache
        cache.set("big", 2**63 - 1)
        assert cache.incr("big") == 2**63
        assert cache.get("big") == 2**63
        cache.set("f", 1.5)
        assert cache.incr("f", 2) == 3.5

    def test_incr_keeps_the_expiry(self, opened):
        cache = opened.cache
        cache.set("n", 1, timeout=SHORT)
        cache.incr("n")
        opened.elapse(PAST_SHORT)
        assert cache.get("n") is None

    def test_incr_is_atomic(self, opened):
        opened.cache.set("counter", 0)
        run_threads(16, lambda i: [opened.cache.incr("counter") for _ in range(10)])
        assert opened.cache.get("counter") == 160

    def test_expiry(self, opened):
        cache = opened.cache
        cache.set("short", "v", timeout=SHORT)
        cache.set("forever", "v", timeout=None)
        assert cache.get("short") == "v" and cache.has_key("short")
        opened.elapse(PAST_SHORT)
        assert cache.get("short") is None
        assert cache.has_key("short") is False
        assert cache.get("forever") == "v"

    def test_default_timeout(self, opened):
        cache = opened.cache
        assert cache.default_timeout == 300  # Django's default
        cache.default_timeout = SHORT
        cache.set("k", "v")  # DEFAULT_TIMEOUT: the cache's default
        cache.set("kept", "v", timeout=60)
        assert cache.get("k") == "v"
        opened.elapse(PAST_SHORT)
        assert cache.get("k") is None
        assert cache.get("kept") == "v"

    @pytest.mark.parametrize("timeout", [0, -1])
    def test_zero_or_negative_timeout_stores_nothing(self, opened, timeout):
        cache = opened.cache
        cache.set("k", "old")
        cache.set("k", "new", timeout=timeout)
        assert cache.get("k") is None
        assert cache.add("k2", "v", timeout=timeout) is True  # it was free
        assert cache.get("k2") is None
        cache.set_many({"a": 1}, timeout=timeout)
        assert cache.get("a") is None

    def test_touch(self, opened):
        cache = opened.cache
        cache.set("k", "v", timeout=SHORT)
        assert cache.touch("k", timeout=60) is True
        opened.elapse(PAST_SHORT)
        assert cache.get("k") == "v"
        assert cache.touch("absent", timeout=60) is False

    def test_touch_none_makes_persistent_and_zero_deletes(self, opened):
        cache = opened.cache
        cache.set("k", "v", timeout=SHORT)
        assert cache.touch("k", None) is True
        assert cache.touch("k", None) is True  # already persistent: still exists
        opened.elapse(PAST_SHORT)
        assert cache.get("k") == "v"
        assert cache.touch("k", 0) is True
        assert cache.get("k") is None
        assert cache.touch("k", 0) is False

    def test_versions_and_key_prefix(self, opened):
        cache = opened.cache
        cache.set("k", "v1", version=1)
        cache.set("k", "v2", version=2)
        assert cache.get("k") == "v1" and cache.get("k", version=2) == "v2"
        assert cache.incr_version("k", version=2) == 3
        assert cache.get("k", version=2) is None and cache.get("k", version=3) == "v2"
        cache.key_prefix = "other"
        assert cache.get("k") is None
        cache.set("k", "prefixed")
        cache.key_prefix = ""
        assert cache.get("k") == "v1"

    def test_async_api(self, opened):
        async def scenario():
            await opened.cache.aset("k", {"v": 1})
            assert await opened.cache.aadd("k", "x") is False
            assert await opened.cache.aget("k") == {"v": 1}
            assert await opened.cache.adelete("k") is True

        asyncio.run(scenario())

    def test_get_or_set(self, opened):
        assert opened.cache.get_or_set("k", lambda: "computed") == "computed"
        assert opened.cache.get_or_set("k", "ignored") == "computed"

    def test_unportable_keys_warn_like_django(self, opened):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            opened.cache.set("has space", 1)
            opened.cache.set("k" * 300, 2)
            opened.cache.set("fine-key", 3)
            assert opened.cache.get("has space") == 1 and opened.cache.get("k" * 300) == 2
            assert opened.cache.get("fine-key") == 3
        # A garbage collection during the block may report sockets an earlier test left
        # open (ResourceWarning): not this cache's warnings.
        ours = [w.category for w in caught if not issubclass(w.category, ResourceWarning)]
        assert ours == [CacheKeyWarning] * 4

    def test_clear_removes_only_this_cache(self, opened, tmp_path, request):
        from .conftest import cache_block

        other_name = opened.instance + "b"
        block = cache_block(opened.variant, tmp_path, request)
        other = Container(Config.load({"cache": {other_name: block}}, {}))
        neighbour = other.cache(other_name)
        try:
            neighbour.set("k", "neighbour")
            opened.cache.set_many({"k": "mine", "j": "mine"})
            opened.cache.clear()
            assert opened.cache.get_many(["k", "j"]) == {}
            assert neighbour.get("k") == "neighbour"
        finally:
            neighbour.clear()
            other.close()

    def test_the_container_closing_leaves_djangos_cache_working(self, opened):
        # Deliberate change (issue 11): Django holds the cache, so the container's close
        # neither closes nor empties it; the closed container refuses to hand it out.
        opened.cache.set("k", "v")
        opened.container.close()
        with pytest.raises(ContainerClosedError, match=f"cache.{opened.instance}"):
            opened.container.cache(opened.instance)
        assert opened.cache.get("k") == "v"
        opened.cache.close()  # what Django calls after every request: harmless
        assert opened.cache.get("k") == "v"

    def test_repr_has_no_secret(self, opened):
        text = repr(opened.cache)
        assert opened.instance in text and "password" not in text
