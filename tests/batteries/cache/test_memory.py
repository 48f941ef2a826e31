"""The memory adapter: LRU bound, lazy and periodic sweeping, copying, threads."""

from __future__ import annotations

import logging
import pickle
import random
import threading
from datetime import timedelta

import pytest

from toolkit_batteries.cache.adapters.memory import MemoryCache, MemoryStore
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .helpers import FakeClock, unique


def open_memory(**options) -> MemoryCache:
    """Open a memory cache of its own (a unique name: Django shares stores by LOCATION)."""
    name = unique()
    block = {"adapter": "memory", "options": options}
    return Container(Config.load({"cache": {name: block}}, {})).cache(name)


def test_defaults_follow_the_spec():
    cache = open_memory()
    assert cache.max_entries == 1000
    assert cache._store.sweep_interval == 60.0
    assert cache.default_timeout == 300


def test_options_size_and_sweep_the_store():
    cache = open_memory(max_entries=3, sweep_interval="5s")
    assert cache.max_entries == 3 and cache._store.sweep_interval == 5.0


def test_non_positive_bounds_fall_back_to_the_defaults():
    store = MemoryStore(max_entries=-5, sweep_interval=-1)
    assert (store.max_entries, store.sweep_interval) == (1000, 60.0)


def test_least_recently_used_entry_is_evicted():
    cache = open_memory(max_entries=3)
    cache.set_many({"a": 1, "b": 2, "c": 3})
    assert cache.get("a") == 1  # a is now the most recently used
    cache.set("d", 4)
    assert cache.get("b") is None
    assert cache.get_many(["a", "c", "d"]) == {"a": 1, "c": 3, "d": 4}
    assert cache.size() == 3


def test_overwriting_a_key_in_a_full_cache_evicts_nothing():
    cache = open_memory(max_entries=2)
    cache.set_many({"a": 1, "b": 2})
    cache.set("a", 10)
    assert cache.get_many(["a", "b"]) == {"a": 10, "b": 2}


def test_expired_entries_are_dropped_when_read():
    cache, clock = open_memory(), FakeClock()
    cache.clock = clock
    cache.set("k", "v", timeout=10)
    clock.advance(10)
    assert cache.size() == 1  # nothing has looked at it yet
    assert cache.get("k") is None
    assert cache.size() == 0


def test_expired_entries_are_swept_every_sweep_interval():
    cache, clock = open_memory(sweep_interval="30s"), FakeClock()
    cache.clock = clock
    for i in range(5):
        cache.set(f"short{i}", i, timeout=1)
    cache.set("long", "kept", timeout=None)
    clock.advance(2)
    cache.set("other", 1)  # a write before the interval: no sweep yet
    assert cache.size() == 7
    clock.advance(30)
    cache.set("trigger", 1)
    assert cache.size() == 3  # long, other, trigger
    assert cache.get("long") == "kept"


def test_sweep_now_reports_the_count():
    cache, clock = open_memory(), FakeClock()
    cache.clock = clock
    cache.set_many({"a": 1, "b": 2}, timeout=1)
    cache.set("c", 3, timeout=100)
    clock.advance(5)
    assert cache.sweep() == 2
    assert cache.size() == 1


def test_immutable_scalars_are_stored_as_is_and_others_pickled():
    cache = open_memory()
    cache.set("s", "text")
    cache.set("d", {"a": 1})
    assert cache._data[":1:s"][1:] == ("text", False)
    assert cache._data[":1:d"][2] is True
    assert pickle.loads(cache._data[":1:d"][1]) == {"a": 1}


def test_unpicklable_values_fail_and_leave_the_cache_unchanged():
    cache = open_memory()
    cache.set("k", "before")
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        cache.set("k", threading.Lock())
    assert cache.get("k") == "before"


def test_threads_hammering_a_small_cache_keep_it_bounded_and_consistent():
    cache = open_memory(max_entries=50)
    errors: list[BaseException] = []

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(2000):
                key = f"k{rng.randrange(120)}"
                action = rng.random()
                if action < 0.5:
                    cache.set(key, [key])
                elif action < 0.9:
                    value = cache.get(key)
                    assert value is None or value == [key]
                else:
                    cache.delete(key)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert cache.size() <= 50


def test_every_backend_object_of_one_location_shares_the_store():
    # Deliberate change (issue 11): Django holds the store, one per LOCATION, so closing a
    # container no longer empties it; Django builds one backend per thread over one store.
    cache = open_memory()
    cache.set("k", "v")
    seen: list = []
    thread = threading.Thread(target=lambda: seen.append(MemoryCache(cache.instance, {}).get("k")))
    thread.start()
    thread.join()
    assert seen == ["v"]
    cache.clear()
    assert len(cache._data) == 0


def test_verbose_logs_eviction_and_sweeps(caplog):
    cache, clock = (
        open_memory(max_entries=1, verbose=True, sweep_interval=timedelta(seconds=1)),
        FakeClock(),
    )
    cache.clock = clock
    with caplog.at_level(logging.INFO, logger="toolkit.cache"):
        cache.set("a", 1, timeout=1)
        cache.set("b", 2)
        clock.advance(5)
        cache.set("c", 3, timeout=1)
        clock.advance(5)
        cache.set("c", 4)
    messages = [r.getMessage() for r in caplog.records]
    assert any("evicted the least recently used entry" in m for m in messages)
    assert any("swept 1 expired entries" in m for m in messages)
