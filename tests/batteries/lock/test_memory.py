"""The memory lock adapter: bounded table, expired-only eviction, waking waiters."""

from __future__ import annotations

import threading
import time

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.lock import LockCapacityError
from toolkit_batteries.lock.adapters.memory import MemoryLock

from ..cache.helpers import FakeClock


def open_memory(**options) -> MemoryLock:
    lock = Container(Config.load({"lock": {"adapter": "memory", "options": options}}, {})).lock()
    lock.clock = FakeClock()
    return lock


def test_options_follow_the_spec_defaults():
    lock = open_memory()
    assert (lock.default_ttl, lock.retry_interval, lock.max_entries) == (30.0, 0.05, 1000)
    lock = open_memory(ttl="5s", retry_interval="5ms", max_entries=7)
    assert (lock.default_ttl, lock.retry_interval, lock.max_entries) == (5.0, 0.005, 7)


def test_a_full_table_evicts_expired_leases_least_recently_used_first():
    lock = open_memory(max_entries=3)
    a = lock.acquire("a", ttl=1)
    lock.acquire("b", ttl=1)
    lock.acquire("c", ttl=100)
    lock.clock.advance(2)  # a and b expired, c is live
    assert len(lock) == 3
    assert lock.acquire("d") is not None  # one slot freed: a, the least recently used
    assert len(lock) == 3 and "a" not in lock._leases and "b" in lock._leases
    assert a.release() is False
    assert lock.locked("c")


def test_a_live_lease_is_never_evicted():
    lock = open_memory(max_entries=2)
    first, second = lock.acquire("a"), lock.acquire("b")
    with pytest.raises(LockCapacityError, match=r"lock\.default: 2 leases are live"):
        lock.acquire("c")
    assert first.held() and second.held()
    first.release()
    assert lock.acquire("c") is not None  # released leases leave the table at once


def test_a_release_wakes_a_waiter_before_the_retry_interval():
    lock = open_memory(retry_interval="10s")
    holder = lock.acquire("job")
    threading.Timer(0.05, holder.release).start()
    started = time.monotonic()
    assert lock.acquire("job", wait=20) is not None
    assert time.monotonic() - started < 5  # woken, not polled every 10 s


def test_close_forgets_leases_and_refuses_further_use():
    container = Container(Config.load({}, {}))
    lock = container.lock()
    lock.acquire("job")
    leases = lock._leases
    container.close()
    assert len(leases) == 0
