"""The memory adapter's own rules: LRU eviction, idle sweeping, speed-critical paths."""

from __future__ import annotations

from toolkit_batteries.ratelimit.adapters.memory import MemoryRateLimiter
from toolkit_batteries.ratelimit.base import Limits


def make(clock, **limits) -> MemoryRateLimiter:
    params = {"rate": 1, "burst": 2, "idle_ttl": 600, "sweep_interval": 60, "max_entries": 1000}
    params.update(limits)
    return MemoryRateLimiter(Limits(**params), clock=clock)


def test_lru_eviction_drops_the_least_recently_used_bucket(clock):
    limiter = make(clock, max_entries=3)
    for key in ("a", "b", "c"):
        limiter.allow(key, 2)
    limiter.allow("a", 0)  # touch a: b is now the least recently used
    limiter.allow("d")
    assert len(limiter) == 3 and limiter.evictions == 1
    assert not limiter.allow("b")  # b was evicted empty: its debt came back with it
    assert not limiter.allow("a")  # a survived with its empty bucket
    assert limiter.evictions == 2  # bringing b back evicted c
    clock.advance(2)  # long enough for b to refill, evicted or not
    assert limiter.allow("b", 2).allowed


def test_idle_buckets_are_swept_on_schedule(clock):
    limiter = make(clock, rate=1, burst=2, idle_ttl=10, sweep_interval=5)
    limiter.allow("idle", 2)
    clock.advance(4)
    limiter.allow("busy")
    clock.advance(4)  # 8 s: the sweep runs (interval 5 s) but "idle" is not 10 s idle yet
    limiter.allow("busy")
    assert len(limiter) == 2
    clock.advance(3)  # 11 s idle, but the next sweep is only due at 13 s
    limiter.allow("busy")
    assert len(limiter) == 2
    clock.advance(2.5)  # 13.5 s: sweep due; "idle" goes, "busy" (used 2.5 s ago) stays
    limiter.allow("busy", 0)
    assert len(limiter) == 1


def test_a_bucket_is_not_forgotten_before_it_would_be_full(clock):
    # idle_ttl 1 s, but an empty bucket needs 50 s to refill: forgetting it at 1 s would
    # hand out 5 free tokens.
    limiter = make(clock, rate=0.1, burst=5, idle_ttl=1, sweep_interval=1)
    limiter.allow("k", 5)
    clock.advance(30)
    assert limiter.sweep() == 0 and len(limiter) == 1
    assert limiter.allow("k", 3).allowed and not limiter.allow("k", 1).allowed
    clock.advance(50)
    assert limiter.sweep() == 1 and len(limiter) == 0


def test_sweep_only_walks_the_idle_end(clock):
    limiter = make(clock, idle_ttl=10, sweep_interval=1)
    for i in range(100):
        limiter.allow(f"old-{i}")
    clock.advance(20)
    for i in range(5):
        limiter.allow(f"new-{i}")  # the first call sweeps the 100 old buckets
    assert len(limiter) == 5
    assert limiter.sweep() == 0


def test_a_clock_going_backwards_never_adds_tokens(clock):
    limiter = make(clock, rate=1, burst=1)
    assert limiter.allow("k")
    clock.advance(-100)
    assert not limiter.allow("k")
    clock.advance(100.5)
    assert not limiter.allow("k")  # only half a second of refill since the newest call
    clock.advance(0.5)
    assert limiter.allow("k")


def test_opens_from_configuration(container_for):
    limiter = container_for({"adapter": "memory", "options": {"rate": 2.5, "burst": 4}}).ratelimit()
    assert isinstance(limiter, MemoryRateLimiter)
    assert (limiter.rate, limiter.burst, limiter.limits.max_entries) == (2.5, 4, 1000)
    assert (limiter.limits.idle_ttl, limiter.limits.sweep_interval) == (600.0, 60.0)
    assert "rate=2.5/s burst=4" in repr(limiter)
