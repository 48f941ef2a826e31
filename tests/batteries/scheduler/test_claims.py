"""Slot claims: each (schedule, slot) is dispatched once across scheduler processes.

Two :class:`EmbeddedScheduler` objects stand for two ``schedule:run`` processes (two
hosts, a rolling deploy's overlap): they share a clock and, through the ``lock``
battery, a claim store. On ``kvserver`` (the real Redis, database 15, a unique key
prefix per test) they coordinate; on two ``memory`` locks (the default, per process)
they do not.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import redis

from tests.support.clock import FakeClock
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ConfigurationError
from toolkit_batteries.lock.adapters.kvserver import KVServerLock
from toolkit_batteries.lock.adapters.memory import MemoryLock
from toolkit_batteries.queue.jobs import JobRegistry, job
from toolkit_batteries.scheduler import Fired, Schedule
from toolkit_batteries.scheduler.adapters.embedded import (
    DEFAULT_CLAIM_TTL,
    EmbeddedScheduler,
    claim_key,
)
from toolkit_batteries.scheduler.runner import run_once

from ..cache.helpers import unique

T0 = datetime(2025, 1, 6, 10, 0, 30, tzinfo=UTC)  # a Monday, 30 s into 10:00 UTC


class Recorder:
    """A dispatcher shared by the "processes": it records every call."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def dispatch(self, job: Any, args: Any = (), kwargs: Any = None) -> str:
        self.calls.append(job.name)
        return str(len(self.calls))


@pytest.fixture
def ping() -> Any:
    @job(name="claims.ping", registry=JobRegistry())
    def ping() -> None:
        """Do nothing; only dispatched."""

    return ping


@pytest.fixture
def prefix(raw: redis.Redis) -> Iterator[str]:
    value = unique("t-") + ":"
    yield value
    keys = list(raw.scan_iter(match=value + "*"))
    if keys:
        raw.delete(*keys)


@pytest.fixture
def kv_container(redis_url: str, prefix: str) -> Iterator[Container]:
    config = Config.load(
        {"lock": {"adapter": "kvserver", "options": {"url": redis_url, "prefix": prefix}}}, {}
    )
    with Container(config) as container:
        yield container


def processes(lock_a: Any, lock_b: Any, *schedules: Schedule) -> tuple[Any, ...]:
    """Return two schedulers (one per "process") on one clock and one recorder."""
    clock, recorder = FakeClock(T0), Recorder()
    pair = []
    for lock in (lock_a, lock_b):
        scheduler = EmbeddedScheduler(dispatcher=recorder, clock=clock, lock=lock)
        for schedule in schedules:
            scheduler.add(schedule)
        pair.append(scheduler)
    return pair[0], pair[1], clock, recorder


def names(fired: list[Fired]) -> list[str]:
    return [record.name for record in fired]


# --------------------------------------------------------------------------- kvserver


def test_two_processes_on_a_kvserver_lock_dispatch_each_slot_once(
    kv_container: Container, ping: Any
) -> None:
    lock = kv_container.lock()
    a, b, clock, recorder = processes(
        lock, lock, Schedule("every", "* * * * *", ping), Schedule("even", "*/2 * * * *", ping)
    )
    assert names(a.run_pending()) == ["every", "even"]  # 10:00
    assert b.run_pending() == []  # the same slots, a moment later: claimed
    assert len(recorder.calls) == 2
    assert (a.claimed_elsewhere, b.claimed_elsewhere) == (0, 2)

    clock.advance(minutes=1)  # 10:01: whichever looks first wins, here b
    assert names(b.run_pending()) == ["every"]
    assert a.run_pending() == []
    assert len(recorder.calls) == 3 and a.claimed_elsewhere == 1

    clock.advance(minutes=1)  # 10:02
    fired = a.run_pending() + b.run_pending()
    assert sorted(names(fired)) == ["even", "every"] and len(recorder.calls) == 5


def test_a_late_process_with_a_missed_slot_skips_the_claimed_one(
    kv_container: Container, ping: Any
) -> None:
    lock = kv_container.lock()
    a, b, clock, recorder = processes(lock, lock, Schedule("every", "* * * * *", ping))
    assert names(a.run_pending()) == ["every"] and b.run_pending() == []  # 10:00
    for _ in range(3):  # 10:01 to 10:03: a fires each; b is suspended
        clock.advance(minutes=1)
        assert names(a.run_pending()) == ["every"]
    clock.advance(seconds=20)  # b wakes at 10:03:50: its latest missed slot, 10:03, is taken
    assert b.run_pending() == []
    assert len(recorder.calls) == 4 and b.claimed_elsewhere == 2


def test_the_claim_is_a_lease_that_outlives_the_dispatch(
    kv_container: Container, raw: redis.Redis, prefix: str, ping: Any
) -> None:
    a, _, _, _ = processes(kv_container.lock(), None, Schedule("every", "* * * * *", ping))
    (fired,) = a.run_pending()
    key = prefix + "scheduler:default:every:2025-01-06T10:00Z"
    assert key == prefix + claim_key("default", "every", fired.slot)
    assert raw.exists(key) == 1  # not released after the dispatch
    assert DEFAULT_CLAIM_TTL * 1000 - 5_000 < raw.pttl(key) <= DEFAULT_CLAIM_TTL * 1000


def test_claim_keys_are_utc_minutes_per_scheduler_instance() -> None:
    paris = datetime(2025, 1, 6, 11, 0, 42, tzinfo=UTC).astimezone()
    assert claim_key("jobs", "n", paris) == "scheduler:jobs:n:2025-01-06T11:00Z"


def test_an_unreachable_lock_dispatches_nothing_and_reports_it(ping: Any) -> None:
    config = Config.load(
        {"lock": {"adapter": "kvserver", "options": {"url": "redis://127.0.0.1:1/15"}}}, {}
    )
    with Container(config) as container:
        a, _, _, recorder = processes(container.lock(), None, Schedule("every", "* * * * *", ping))
        (fired,) = a.run_pending()
    assert not fired.ok and fired.unreachable
    assert fired.error and fired.error.startswith("ServiceUnavailableError")
    assert recorder.calls == []


def _wait_until_gone(raw: redis.Redis, key: str, timeout: float = 10.0) -> None:
    """Wait (bounded) for the claim ``key`` to expire on the Redis server."""
    deadline = time.monotonic() + timeout
    while raw.exists(key):
        assert time.monotonic() < deadline, "the claim never expired"
        time.sleep(0.05)


def test_a_process_paused_past_the_claim_ttl_does_not_fire_the_slot_again(
    kv_container: Container, raw: redis.Redis, prefix: str, ping: Any
) -> None:
    # Two processes on the real Redis lock, claims of 2 s (the TTL scaled down from a
    # day); process b pauses at 09:59 and wakes long after a fired 10:00 and the claim
    # expired on the server.
    lock = kv_container.lock()
    clock, recorder = FakeClock(datetime(2025, 1, 6, 9, 59, tzinfo=UTC)), Recorder()
    a, b = (
        EmbeddedScheduler(dispatcher=recorder, clock=clock, lock=lock, claim_ttl=2.0)
        for _ in range(2)
    )
    for scheduler in (a, b):
        scheduler.add(Schedule("hourly", "0 * * * *", ping))
        assert scheduler.run_pending() == []  # 09:59: nothing due; b pauses here
    clock.advance(minutes=1)
    assert names(a.run_pending()) == ["hourly"]  # 10:00, claimed for 2 s
    _wait_until_gone(raw, prefix + "scheduler:default:hourly:2025-01-06T10:00Z")
    clock.advance(minutes=5)  # b wakes at 10:05: its latest missed slot is 10:00
    fired_late = b.run_pending()
    assert recorder.calls == ["claims.ping"]  # dispatched once, by a
    assert fired_late == [] and b.skipped_too_late == 1


def test_a_short_pause_still_catches_up_and_finds_the_claim(
    kv_container: Container, ping: Any
) -> None:
    # The default claim lives a day: a process paused for hours catches up its missed
    # slot when nobody fired it, and finds the claim when somebody did.
    lock = kv_container.lock()
    clock, recorder = FakeClock(datetime(2025, 1, 6, 9, 59, tzinfo=UTC)), Recorder()
    a, b = (EmbeddedScheduler(dispatcher=recorder, clock=clock, lock=lock) for _ in range(2))
    assert a.claim_ttl == DEFAULT_CLAIM_TTL == 86_400
    a.add(Schedule("hourly", "0 * * * *", ping))
    b.add(Schedule("hourly", "0 * * * *", ping))
    b.add(Schedule("daily", "0 0 * * *", ping))
    assert a.run_pending() == [] and b.run_pending() == []  # 09:59
    clock.advance(minutes=1)
    assert names(a.run_pending()) == ["hourly"]  # 10:00
    clock.advance(hours=3)  # b wakes at 12:59: 12:00 is due, nobody fired it
    assert names(b.run_pending()) == ["hourly"]
    clock.advance(hours=12)  # 00:59 next day: b catches up midnight, a finds 00:00 taken
    assert names(b.run_pending()) == ["hourly", "daily"]
    assert a.run_pending() == [] and a.claimed_elsewhere == 1
    assert len(recorder.calls) == 4 and b.skipped_too_late == 0


# --------------------------------------------------------------------------- memory


def test_two_memory_locks_do_not_coordinate(ping: Any) -> None:
    # The default lock adapter is per process: two processes each dispatch every slot.
    a, b, clock, recorder = processes(
        MemoryLock(), MemoryLock(), Schedule("every", "* * * * *", ping)
    )
    assert names(a.run_pending()) == ["every"] and names(b.run_pending()) == ["every"]
    clock.advance(minutes=1)
    assert names(a.run_pending()) == ["every"] and names(b.run_pending()) == ["every"]
    assert len(recorder.calls) == 4
    assert a.claimed_elsewhere == b.claimed_elsewhere == 0


def test_two_schedulers_sharing_one_memory_lock_in_a_process_fire_once(ping: Any) -> None:
    lock = MemoryLock()
    a, b, _, recorder = processes(lock, lock, Schedule("every", "* * * * *", ping))
    assert names(a.run_pending()) == ["every"] and b.run_pending() == []
    assert len(recorder.calls) == 1


def test_run_once_reports_slots_claimed_elsewhere(ping: Any) -> None:
    lock = MemoryLock()
    a, b, _, _ = processes(lock, lock, Schedule("every", "* * * * *", ping))
    said: list[str] = []
    assert run_once(a, said.append)["claimed_elsewhere"] == 0
    data = run_once(b, said.append)
    assert data == {"dispatched": [], "failed": [], "claimed_elsewhere": 1}
    assert said[-1] == "1 due schedule(s) already claimed by another process"


def test_claim_ttl_must_be_positive() -> None:
    with pytest.raises(ValueError, match="claim_ttl"):
        EmbeddedScheduler(claim_ttl=0)


# --------------------------------------------------------------------------- configuration


def test_the_container_gives_the_scheduler_the_default_memory_lock() -> None:
    with Container(Config.load({}, {})) as container:
        scheduler = container.scheduler()
        assert isinstance(scheduler.lock, MemoryLock) and scheduler.lock is container.lock()


def test_the_environment_selects_a_shared_kvserver_lock(
    redis_url: str, prefix: str, raw: redis.Redis, ping: Any
) -> None:
    environ = {
        "LOCK__DEFAULT__ADAPTER": "kvserver",
        "LOCK__DEFAULT__URL": redis_url,
        "LOCK__DEFAULT__PREFIX": prefix,
    }
    clock, recorder = FakeClock(T0), Recorder()
    # Two containers: two processes reading the same environment.
    with Container(Config.load({}, environ)) as one, Container(Config.load({}, environ)) as two:
        pair = [one.scheduler(), two.scheduler()]
        for scheduler in pair:
            assert isinstance(scheduler.lock, KVServerLock)
            scheduler.clock, scheduler.dispatcher = clock, recorder
            scheduler.add(Schedule("every", "* * * * *", ping))
        assert pair[0].lock is one.lock() and pair[0].lock is not pair[1].lock
        fired = pair[0].run_pending() + pair[1].run_pending()
        clock.advance(minutes=1)
        fired += pair[1].run_pending() + pair[0].run_pending()
    assert len(fired) == len(recorder.calls) == 2
    assert raw.exists(prefix + "scheduler:default:every:2025-01-06T10:01Z") == 1


def test_a_scheduler_instance_uses_the_lock_instance_of_its_name(
    redis_url: str, prefix: str
) -> None:
    settings = {
        "scheduler": {"jobs": {"adapter": "embedded"}},
        "lock": {"jobs": {"adapter": "kvserver", "options": {"url": redis_url, "prefix": prefix}}},
    }
    with Container(Config.load(settings, {})) as container:
        assert container.scheduler("jobs").lock is container.lock("jobs")
        assert isinstance(container.scheduler().lock, MemoryLock)  # lock.default


def test_a_lock_that_does_not_open_fails_the_scheduler_open() -> None:
    config = Config.load({}, {"LOCK__DEFAULT__ADAPTER": "nosuch"})
    with (
        Container(config) as container,
        pytest.raises(ConfigurationError, match=r"scheduler\.default: slots are claimed on lock"),
    ):
        container.scheduler()
