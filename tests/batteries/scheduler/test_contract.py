"""The contract every scheduler adapter keeps, opened the real way (environment, Container).

``embedded`` keeps its slots in memory; ``sqlserver`` claims them as rows, here on a fresh
migrated SQLite file and on the real PostgreSQL server. Time is a fake clock and
dispatches go to a recording dispatcher, so "nothing more fired" is read from a drained
clock (every slot up to now already run), never from a sleep.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from tests.batteries.scheduler.helpers import Recorder
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.queue.jobs import JobRegistry, job
from toolkit_batteries.scheduler import Fired, InvalidScheduleError, Schedule, Scheduler

#: Every adapter of the table; ``sqlserver`` on both databases it runs on.
VARIANTS = ("embedded", "sqlserver-sqlite", "sqlserver-postgres")


def names(fired: list[Fired]) -> list[str]:
    return [record.name for record in fired]


@pytest.fixture
def ping() -> Any:
    @job(name="contract.ping", registry=JobRegistry())
    def ping(*args: Any, **kwargs: Any) -> None:
        """Do nothing; only dispatched."""

    return ping


@pytest.fixture(params=VARIANTS)
def make(request, clock, recorder) -> Iterator[Callable[..., Scheduler]]:
    """Return ``make(*schedules, **environ)``: a scheduler of the variant in its own container."""
    adapter, _, database = request.param.partition("-")
    environ = {"SCHEDULER__DEFAULT__ADAPTER": adapter}
    if database == "sqlite":
        environ["SCHEDULER__DEFAULT__DSN"] = request.getfixturevalue("sqlite_dsn")
    elif database == "postgres":
        dsn = request.getfixturevalue("postgres_dsn")
        environ["SCHEDULER__DEFAULT__DSN"] = dsn
        from toolkit_batteries.scheduler.adapters.sqlserver import TABLE

        def clear() -> None:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f"DELETE FROM {TABLE}")

        clear()
        request.addfinalizer(clear)
    with ExitStack() as stack:

        def build(*schedules: Schedule, **extra: str) -> Scheduler:
            container = stack.enter_context(Container(Config.load({}, {**environ, **extra})))
            scheduler = container.scheduler()
            scheduler.clock, scheduler.dispatcher = clock, recorder
            for schedule in schedules:
                scheduler.add(schedule)
            return scheduler

        build.variant = request.param  # type: ignore[attr-defined]
        yield build


class TestSchedulerContract:
    def test_is_a_scheduler_named_after_its_adapter(self, make):
        scheduler = make()
        assert isinstance(scheduler, Scheduler)
        assert scheduler.adapter_name == make.variant.split("-")[0]
        assert "scheduler.default" in repr(scheduler)

    def test_entries_add_replace_remove(self, make, ping):
        scheduler = make(Schedule("a", "0 * * * *", ping))
        with pytest.raises(InvalidScheduleError):
            scheduler.add(Schedule("a", "5 * * * *", ping))
        scheduler.add(Schedule("a", "5 * * * *", ping), replace=True)
        assert [(s.name, s.cron) for s in scheduler.entries()] == [("a", "5 * * * *")]
        assert scheduler.remove("a") is True and scheduler.remove("a") is False
        assert scheduler.entries() == []

    def test_next_run_is_strictly_after_and_in_the_entry_time_zone(self, make, ping):
        scheduler = make(
            Schedule("hourly", "0 * * * *", ping),
            Schedule("paris", "0 9 * * *", ping, tz="Europe/Paris"),
        )
        assert scheduler.next_run("hourly") == datetime(2025, 1, 6, 11, 0, tzinfo=UTC)
        at_slot = datetime(2025, 1, 6, 11, 0, tzinfo=UTC)
        assert scheduler.next_run("hourly", at_slot) == datetime(2025, 1, 6, 12, 0, tzinfo=UTC)
        assert scheduler.next_run("paris").isoformat() == "2025-01-07T09:00:00+01:00"
        with pytest.raises(KeyError):
            scheduler.next_run("nope")

    def test_due_slots_fire_once_with_their_arguments(self, make, ping, clock, recorder):
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
        assert recorder.calls == [
            ("contract.ping", ("top",), {}),
            ("contract.ping", (), {"k": 1}),
        ]
        clock.advance(seconds=20)  # the same slot: drained, nothing more fires
        assert scheduler.due() == [] and scheduler.run_pending() == []
        clock.advance(seconds=10)  # 10:01:00
        assert names(scheduler.run_pending()) == ["every"]
        assert scheduler.run_pending() == [] and len(recorder.calls) == 3

    def test_missed_slots_fire_once_for_the_latest(self, make, ping, clock):
        scheduler = make(  # in UTC: the container's zone is Django's TIME_ZONE
            Schedule("hourly", "0 * * * *", ping, tz="UTC"),
            Schedule("noon", "0 12 * * *", ping, tz="UTC"),
        )
        assert names(scheduler.run_pending()) == ["hourly"]
        clock.set(hour=15, minute=42)
        fired = scheduler.run_pending()
        assert [(f.name, f.slot.hour) for f in fired] == [("hourly", 15), ("noon", 12)]
        clock.advance(minutes=1)
        assert scheduler.run_pending() == []

    def test_a_clock_set_back_fires_nothing_twice(self, make, ping, clock):
        scheduler = make(Schedule("every", "* * * * *", ping))
        clock.set(minute=5)
        assert names(scheduler.run_pending()) == ["every"]
        clock.set(minute=3)
        assert scheduler.run_pending() == []
        clock.set(minute=6, second=0)
        assert names(scheduler.run_pending()) == ["every"]

    def test_concurrent_run_pending_calls_fire_a_slot_once(self, make, ping, recorder):
        scheduler = make(*(Schedule(f"s{i}", "* * * * *", ping) for i in range(10)))
        barrier = threading.Barrier(4)

        def tick() -> None:
            barrier.wait(timeout=30)
            scheduler.run_pending()

        threads = [threading.Thread(target=tick) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not any(thread.is_alive() for thread in threads)
        assert sorted(call[0] for call in recorder.calls) == ["contract.ping"] * 10

    def test_a_failing_dispatch_is_reported_and_the_others_still_fire(self, make, ping, recorder):
        class Failing(Recorder):
            def dispatch(self, job: Any, args: Any = (), kwargs: Any = None) -> str:
                if args == ("boom",):
                    raise RuntimeError("broker down")
                return super().dispatch(job, args, kwargs)

        scheduler = make(
            Schedule("bad", "* * * * *", ping, args=("boom",)),
            Schedule("good", "* * * * *", ping),
        )
        failing = Failing()
        scheduler.dispatcher = failing
        fired = {f.name: f for f in scheduler.run_pending()}
        assert fired["bad"].ok is False and fired["good"].ok is True
        assert [call[0] for call in failing.calls] == ["contract.ping"]

    def test_naive_datetimes_are_refused(self, make):
        with pytest.raises(ValueError, match="timezone-aware"):
            make().due(datetime(2025, 1, 1, 10, 0))
