"""The embedded scheduler: entries, due slots, missed runs, time zones, dispatch and the loop.

Time is a fake clock (an aware ``datetime`` moved by the test), so a day of cron slots
takes milliseconds. Dispatches go to a recording dispatcher, except where the real job
dispatcher and the memory queue are the point.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import override_settings

from tests.batteries.scheduler.helpers import T0, Recorder
from tests.support.clock import FakeClock
from toolkit_batteries import services
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ServiceUnavailableError, UnknownAdapterError
from toolkit_batteries.queue.jobs import JobRegistry, job, reset_dispatchers
from toolkit_batteries.queue.jobs.payload import decode
from toolkit_batteries.scheduler import Fired, InvalidScheduleError, Schedule
from toolkit_batteries.scheduler.adapters.embedded import EmbeddedScheduler, floor_minute


@pytest.fixture
def jobs() -> JobRegistry:
    return JobRegistry()


@pytest.fixture
def ping(jobs: JobRegistry) -> Any:
    @job(name="sched.ping", registry=jobs)
    def ping(*args: Any, **kwargs: Any) -> None:
        """Do nothing; only dispatched."""

    return ping


@pytest.fixture
def make(clock: FakeClock, recorder: Recorder) -> Any:
    def build(*schedules: Schedule, **kwargs: Any) -> EmbeddedScheduler:
        kwargs.setdefault("dispatcher", recorder)
        kwargs.setdefault("clock", clock)
        scheduler = EmbeddedScheduler(**kwargs)
        for schedule in schedules:
            scheduler.add(schedule)
        return scheduler

    return build


def names(fired: list[Fired]) -> list[str]:
    return [record.name for record in fired]


# --------------------------------------------------------------------------- entries


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("bad name!", "* * * * *", "j"), "schedule name"),
        (("n", "", "j"), "non-empty"),
        (("n", "* * * *", "j"), "five fields"),
        (("n", "* * * * * *", "j"), "five fields"),
        (("n", "@reboot", "j"), "unknown cron shorthand"),
        (("n", "* * * * *", ""), "job must be"),
        (("n", "* * * * *", 42), "job must be"),
        (("n", "* * * * *", "j", "abc"), "args must be"),
        (("n", "* * * * *", "j", (), ["k"]), "kwargs must be"),
    ],
)
def test_schedule_rejects_bad_entries(arguments: tuple[Any, ...], message: str) -> None:
    with pytest.raises(InvalidScheduleError, match=message):
        Schedule(*arguments)


def test_schedule_normalises_its_fields(ping: Any) -> None:
    entry = Schedule("tidy", "  0   2 * *  1-5 ", ping, args=[1, 2], kwargs={"a": 1})
    assert entry.cron == "0 2 * * 1-5"
    assert entry.args == (1, 2) and entry.kwargs == {"a": 1}
    assert entry.job_name == "sched.ping"
    assert Schedule("by-name", "@HOURLY", "shop.jobs.sweep").job_name == "shop.jobs.sweep"


def test_add_checks_cron_with_croniter_and_refuses_duplicates(make: Any, ping: Any) -> None:
    scheduler = make()
    with pytest.raises(InvalidScheduleError, match="invalid cron expression"):
        scheduler.add(Schedule("bad", "61 * * * *", ping))
    with pytest.raises(InvalidScheduleError, match="never matches"):
        scheduler.add(Schedule("feb30", "0 0 30 2 *", ping))
    with pytest.raises(InvalidScheduleError, match="unknown time zone"):
        scheduler.add(Schedule("tz", "* * * * *", ping, tz="Mars/Olympus"))
    scheduler.add(Schedule("a", "* * * * *", ping))
    with pytest.raises(InvalidScheduleError, match="already registered"):
        scheduler.add(Schedule("a", "0 * * * *", ping))
    scheduler.add(Schedule("a", "0 * * * *", ping), replace=True)
    scheduler.add(Schedule("b", "@daily", ping))
    assert [(s.name, s.cron) for s in scheduler.entries()] == [("a", "0 * * * *"), ("b", "@daily")]
    assert "a" in scheduler and len(scheduler) == 2 and bool(scheduler)
    assert scheduler.remove("a") is True and scheduler.remove("a") is False
    assert [s.name for s in scheduler.entries()] == ["b"]


def test_next_run_is_strictly_after_and_in_the_entry_time_zone(make: Any, ping: Any) -> None:
    scheduler = make(
        Schedule("hourly", "0 * * * *", ping),
        Schedule("paris", "0 9 * * *", ping, tz="Europe/Paris"),
    )
    assert scheduler.next_run("hourly") == datetime(2025, 1, 6, 11, 0, tzinfo=UTC)
    at_slot = datetime(2025, 1, 6, 11, 0, tzinfo=UTC)
    assert scheduler.next_run("hourly", at_slot) == datetime(2025, 1, 6, 12, 0, tzinfo=UTC)
    paris = scheduler.next_run("paris")
    assert paris.isoformat() == "2025-01-07T09:00:00+01:00"
    with pytest.raises(KeyError, match="no schedule named"):
        scheduler.next_run("nope")


# --------------------------------------------------------------------------- due slots


def test_a_fresh_scheduler_fires_only_what_matches_the_current_minute(
    make: Any, ping: Any, clock: FakeClock, recorder: Recorder
) -> None:
    scheduler = make(
        Schedule("top", "0 * * * *", ping, args=("top",)),
        Schedule("five", "5 * * * *", ping),
        Schedule("every", "* * * * *", ping, kwargs={"k": 1}),
    )
    assert [s.name for s in scheduler.due()] == ["top", "every"]
    assert scheduler.due() == scheduler.due()  # due() changes nothing
    fired = scheduler.run_pending()
    assert names(fired) == ["top", "every"]
    assert all(f.ok and f.slot == datetime(2025, 1, 6, 10, 0, tzinfo=UTC) for f in fired)
    assert [f.id for f in fired] == ["1", "2"]
    assert recorder.calls == [("sched.ping", ("top",), {}), ("sched.ping", (), {"k": 1})]


def test_each_entry_fires_at_most_once_per_slot(make: Any, ping: Any, clock: FakeClock) -> None:
    scheduler = make(Schedule("every", "* * * * *", ping))
    assert names(scheduler.run_pending()) == ["every"]
    clock.advance(seconds=20)  # 10:00:50, same slot
    assert scheduler.due() == [] and scheduler.run_pending() == []
    clock.advance(seconds=10)  # 10:01:00, the next slot
    assert names(scheduler.run_pending()) == ["every"]
    assert scheduler.run_pending() == []


def test_concurrent_run_pending_calls_fire_a_slot_once(
    make: Any, ping: Any, recorder: Recorder
) -> None:
    scheduler = make(*(Schedule(f"s{i}", "* * * * *", ping) for i in range(20)))
    barrier = threading.Barrier(8)

    def tick() -> None:
        barrier.wait()
        scheduler.run_pending()

    threads = [threading.Thread(target=tick) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(recorder.calls) == 20


def test_missed_slots_fire_once_for_the_latest(make: Any, ping: Any, clock: FakeClock) -> None:
    scheduler = make(Schedule("hourly", "0 * * * *", ping), Schedule("noon", "0 12 * * *", ping))
    assert names(scheduler.run_pending()) == ["hourly"]  # 10:00
    clock.set(hour=15, minute=42)  # the process slept through 11:00 ... 15:00
    fired = scheduler.run_pending()
    assert [(f.name, f.slot.hour) for f in fired] == [("hourly", 15), ("noon", 12)]
    clock.advance(minutes=1)
    assert scheduler.run_pending() == []  # caught up: nothing queued behind


def test_missed_slots_are_dropped_with_skip(make: Any, ping: Any, clock: FakeClock) -> None:
    scheduler = make(Schedule("hourly", "0 * * * *", ping), missed="skip")
    assert names(scheduler.run_pending()) == ["hourly"]
    clock.set(hour=15, minute=42)
    assert scheduler.run_pending() == []
    clock.set(hour=16, minute=0)
    assert names(scheduler.run_pending()) == ["hourly"]


def test_a_clock_set_back_fires_nothing_twice(make: Any, ping: Any, clock: FakeClock) -> None:
    scheduler = make(Schedule("every", "* * * * *", ping))
    clock.set(minute=5)
    assert names(scheduler.run_pending()) == ["every"]
    clock.set(minute=3)  # NTP stepped the clock back two minutes
    assert scheduler.run_pending() == []
    clock.set(minute=5, second=59)
    assert scheduler.run_pending() == []
    clock.set(minute=6, second=0)
    assert names(scheduler.run_pending()) == ["every"]


def test_naive_datetimes_are_refused(make: Any) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        make().due(datetime(2025, 1, 1, 10, 0))
    assert floor_minute(T0) == datetime(2025, 1, 6, 10, 0, tzinfo=UTC)


# --------------------------------------------------------------------------- time zones


def test_cron_is_read_in_the_scheduler_time_zone(make: Any, ping: Any, clock: FakeClock) -> None:
    scheduler = make(Schedule("nine", "0 9 * * *", ping), timezone="Europe/Paris")
    clock.now = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)  # 10:00 in Paris (winter)
    assert scheduler.due() == []
    clock.now = datetime(2025, 1, 6, 8, 0, 10, tzinfo=UTC)  # 09:00 in Paris
    (fired,) = scheduler.run_pending()
    assert fired.slot.isoformat() == "2025-01-06T09:00:00+01:00"
    clock.now = datetime(2025, 7, 7, 7, 0, tzinfo=UTC)  # 09:00 in Paris (summer time)
    assert names(scheduler.run_pending()) == ["nine"]


def test_an_entry_time_zone_overrides_the_scheduler_one(
    make: Any, ping: Any, clock: FakeClock
) -> None:
    scheduler = make(
        Schedule("utc", "0 9 * * *", ping),
        Schedule("tokyo", "0 18 * * *", ping, tz="Asia/Tokyo"),
    )
    clock.now = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)  # 18:00 in Tokyo
    assert names(scheduler.run_pending()) == ["utc", "tokyo"]
    assert str(scheduler.zone_of("tokyo")) == "Asia/Tokyo" and scheduler.zone_of("utc") is UTC


def test_open_takes_the_time_zone_from_django_settings() -> None:
    config = Config.load({"scheduler": {"adapter": "embedded"}}, {})
    with override_settings(TIME_ZONE="America/New_York"), Container(config) as container:
        scheduler = container.scheduler()
        assert isinstance(scheduler, EmbeddedScheduler)
        assert str(scheduler.timezone) == "America/New_York"


def test_an_unknown_adapter_lists_the_available_ones() -> None:
    config = Config.load({"scheduler": {"adapter": "nosuch"}}, {})
    with (
        Container(config) as container,
        pytest.raises(UnknownAdapterError, match="embedded, postgres, postgresql, sqlserver"),
    ):
        container.scheduler()


# --------------------------------------------------------------------------- dispatch


def test_a_failing_dispatch_is_reported_and_the_others_still_fire(
    make: Any, ping: Any, recorder: Recorder
) -> None:
    scheduler = make(
        Schedule("ghost", "* * * * *", "nowhere.jobs.missing"),
        Schedule("ok", "* * * * *", ping),
    )
    ghost, ok = scheduler.run_pending()
    assert not ghost.ok and ghost.id is None and ghost.error.startswith("UnknownJobError")
    assert ghost.as_dict()["error"] == ghost.error and not ghost.unreachable
    assert ok.ok and ok.as_dict() == {
        "name": "ok",
        "job": "sched.ping",
        "slot": "2025-01-06T10:00:00+00:00",
        "id": "1",
    }


@pytest.fixture
def memory_services() -> Iterator[None]:
    with override_settings(TOOLKIT={"queue": {"adapter": "memory"}}, TOOLKIT_JOBS={}):
        yield
        services.close()
    reset_dispatchers()


@pytest.mark.usefixtures("memory_services")
def test_by_default_jobs_go_through_the_process_dispatcher_onto_the_queue(clock: FakeClock) -> None:
    scheduler = EmbeddedScheduler(clock=clock)  # no dispatcher injected
    scheduler.add(
        Schedule(
            "by-name",
            "* * * * *",
            "tests.batteries.scheduler.jobs_fixture.ping",  # imported on first fire
            args=(1, "two"),
            kwargs={"three": 3},
        )
    )
    (fired,) = scheduler.run_pending()
    assert fired.ok, fired.error
    message = services.queue().pop("jobs:default", timeout=0)
    assert message is not None and message.id == fired.id
    call = decode(message.body)
    assert call.name == "tests.batteries.scheduler.jobs_fixture.ping"
    assert list(call.args) == [1, "two"] and dict(call.kwargs) == {"three": 3}


# --------------------------------------------------------------------------- the loop


def test_the_loop_fires_at_each_minute_boundary_and_stops(make: Any, ping: Any) -> None:
    # Each look at the clock moves it 20 s: the loop sees every minute three times.
    clock = FakeClock(datetime(2025, 1, 6, 10, 0, 30, tzinfo=UTC), step=timedelta(seconds=20))
    seen: list[Fired] = []
    scheduler = make(
        Schedule("every", "* * * * *", ping),
        Schedule("even", "*/2 * * * *", ping),
        clock=clock,
        tick=0.002,
        on_fire=seen.append,
    )
    scheduler.start()
    deadline = time.monotonic() + 5
    while len([f for f in seen if f.name == "every"]) < 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    scheduler.stop()
    assert not scheduler.running
    every = [f.slot for f in seen if f.name == "every"]
    even = [f.slot for f in seen if f.name == "even"]
    assert len(every) >= 6 and len(set(every)) == len(every)  # one fire per slot
    # Started mid-minute: the loop begins with the next boundary, not the current minute.
    assert every[0] == datetime(2025, 1, 6, 10, 1, tzinfo=UTC)
    assert all(b - a == timedelta(minutes=1) for a, b in itertools.pairwise(every))
    assert even and all(slot.minute % 2 == 0 for slot in even)


def test_an_entry_added_while_running_waits_for_the_next_slot(make: Any, ping: Any) -> None:
    clock = FakeClock(T0)
    scheduler = make(clock=clock, tick=0.002)
    scheduler.start()
    try:
        deadline = time.monotonic() + 2
        while not scheduler.running and time.monotonic() < deadline:
            time.sleep(0.002)
        scheduler.add(Schedule("late", "* * * * *", ping))
        assert scheduler.due() == []  # 10:00 already passed for it
        clock.advance(seconds=30)
        assert [s.name for s in scheduler.due()] == ["late"]
    finally:
        scheduler.stop()


def test_run_refuses_a_second_loop_and_close_ends_everything(make: Any, ping: Any) -> None:
    scheduler = make(Schedule("every", "* * * * *", ping), tick=0.002)
    scheduler.start()
    deadline = time.monotonic() + 2
    while not scheduler.running and time.monotonic() < deadline:
        time.sleep(0.002)
    with pytest.raises(RuntimeError, match="already running"):
        scheduler.run()
    scheduler.close()
    assert not scheduler.running
    scheduler.close()  # idempotent
    with pytest.raises(ServiceUnavailableError, match="closed"):
        scheduler.entries()
    with pytest.raises(ServiceUnavailableError):
        scheduler.add(Schedule("x", "* * * * *", ping))


def test_constructor_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="missed"):
        EmbeddedScheduler(missed="all")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tick"):
        EmbeddedScheduler(tick=0)
    with pytest.raises(InvalidScheduleError, match="unknown time zone"):
        EmbeddedScheduler(timezone="Nowhere/Atall")
