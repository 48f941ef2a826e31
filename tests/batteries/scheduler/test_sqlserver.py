"""The ``sqlserver`` scheduler: slot claims as rows of a SQL table, across processes.

Each "process" is a container of its own, opened from the environment
(``SCHEDULER__DEFAULT__ADAPTER=sqlserver`` and ``SCHEDULER__DEFAULT__DSN``), as two
``schedule:run`` processes would. They share a fake clock and a recording dispatcher.
Every test runs on a fresh migrated SQLite file and on the real PostgreSQL server, in
the session's migrated database (the claims table is emptied after each test).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.support.clock import FakeClock
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.queue.jobs import JobRegistry, job
from toolkit_batteries.scheduler import Fired, Schedule
from toolkit_batteries.scheduler.adapters.sqlserver import (
    DEFAULT_KEEP,
    DEFAULT_PRUNE_EVERY,
    TABLE,
    SQLServerScheduler,
    slot_text,
)
from toolkit_batteries.scheduler.runner import run_once

T0 = datetime(2025, 1, 6, 10, 0, 30, tzinfo=UTC)  # a Monday, 30 s into 10:00 UTC
SECRET = "pw-sched-Qx7-never-shown"


class Recorder:
    """A dispatcher shared by the "processes": it records every call (thread-safe)."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self._lock = threading.Lock()

    def dispatch(self, job: Any, args: Any = (), kwargs: Any = None) -> str:
        with self._lock:
            self.calls.append(job.name)
            return str(len(self.calls))


def names(fired: list[Fired]) -> list[str]:
    return [record.name for record in fired]


@pytest.fixture(params=["sqlite", "postgres"])
def dsn(request: pytest.FixtureRequest) -> Iterator[str]:
    """Yield a migrated database: a fresh SQLite file, or the session's PostgreSQL one."""
    if request.param == "sqlite":
        yield request.getfixturevalue("sqlite_dsn")
        return
    url = request.getfixturevalue("postgres_dsn")
    yield url
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DELETE FROM {TABLE}")


@pytest.fixture
def ping() -> Any:
    @job(name="sqlclaims.ping", registry=JobRegistry())
    def ping() -> None:
        """Do nothing; only dispatched."""

    return ping


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def processes(clock: FakeClock, recorder: Recorder) -> Iterator[Callable[..., SQLServerScheduler]]:
    """Open a scheduler in a container of its own ("a process"); close them all at the end."""
    with ExitStack() as stack:

        def open_process(dsn: str, *schedules: Schedule, **environ: str) -> SQLServerScheduler:
            env = {
                "SCHEDULER__DEFAULT__ADAPTER": "sqlserver",
                "SCHEDULER__DEFAULT__DSN": dsn,
                **environ,
            }
            container = stack.enter_context(Container(Config.load({}, env)))
            scheduler = container.scheduler()
            assert isinstance(scheduler, SQLServerScheduler)
            scheduler.clock, scheduler.dispatcher = clock, recorder
            for schedule in schedules:
                scheduler.add(schedule)
            return scheduler

        yield open_process


def rows(dsn: str) -> list[tuple[str, str]]:
    """Return the claims table's (name, slot) pairs, read without the toolkit."""
    query = f"SELECT name, slot FROM {TABLE} ORDER BY slot, name"
    if dsn.startswith("postgresql://"):
        with psycopg.connect(dsn) as conn:
            return [tuple(row) for row in conn.execute(query).fetchall()]
    import sqlite3

    conn = sqlite3.connect(dsn)
    try:
        return [tuple(row) for row in conn.execute(query).fetchall()]
    finally:
        conn.close()


# --------------------------------------------------------------------------- claims


def test_two_processes_dispatch_each_slot_once(
    dsn: str,
    processes: Callable[..., SQLServerScheduler],
    clock: FakeClock,
    recorder: Recorder,
    ping: Any,
) -> None:
    every, even = Schedule("every", "* * * * *", ping), Schedule("even", "*/2 * * * *", ping)
    a, b = processes(dsn, every, even), processes(dsn, every, even)
    assert a is not b and a.claimed_by != b.claimed_by  # two "processes"

    assert names(a.run_pending()) == ["every", "even"]  # 10:00
    assert b.run_pending() == []  # the same slots, a moment later: claimed
    assert (a.claimed_elsewhere, b.claimed_elsewhere) == (0, 2)

    clock.advance(minutes=1)  # 10:01: whichever looks first wins, here b
    assert names(b.run_pending()) == ["every"]
    assert a.run_pending() == []

    for _ in range(4):  # 10:02 to 10:05, both look at every slot
        clock.advance(minutes=1)
        fired = a.run_pending() + b.run_pending()
        assert len(fired) == len({(record.name, record.slot) for record in fired})

    # 6 slots of "every" and 3 of "even": each dispatched exactly once in total.
    assert sorted(recorder.calls) == ["sqlclaims.ping"] * 9
    assert rows(dsn)[:3] == [
        ("default:even", "2025-01-06T10:00Z"),
        ("default:every", "2025-01-06T10:00Z"),
        ("default:every", "2025-01-06T10:01Z"),
    ]
    assert len(rows(dsn)) == 9


def test_concurrent_claims_of_one_slot_dispatch_once(
    dsn: str, processes: Callable[..., SQLServerScheduler], recorder: Recorder, ping: Any
) -> None:
    schedulers = [processes(dsn, Schedule("every", "* * * * *", ping)) for _ in range(6)]
    start = threading.Barrier(len(schedulers))
    fired: list[Fired] = []
    errors: list[BaseException] = []

    def look(scheduler: SQLServerScheduler) -> None:
        start.wait()
        try:
            fired.extend(scheduler.run_pending())
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=look, args=(s,)) for s in schedulers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == [] and all(record.ok for record in fired), (errors, fired)
    assert len(fired) == len(recorder.calls) == 1
    assert sum(s.claimed_elsewhere for s in schedulers) == len(schedulers) - 1


def test_claims_survive_a_reopen(
    dsn: str,
    processes: Callable[..., SQLServerScheduler],
    clock: FakeClock,
    recorder: Recorder,
    ping: Any,
) -> None:
    every = Schedule("every", "* * * * *", ping)
    first = processes(dsn, every)
    assert names(first.run_pending()) == ["every"]  # 10:00
    first.close()
    clock.advance(seconds=20)  # a new process (a deploy) looks at 10:00:50
    later = processes(dsn, every)
    assert later.run_pending() == [] and later.claimed_elsewhere == 1
    clock.advance(minutes=1)  # 10:01 is free
    assert names(later.run_pending()) == ["every"]
    assert len(recorder.calls) == 2


def test_claims_are_per_scheduler_instance(
    dsn: str, processes: Callable[..., SQLServerScheduler], recorder: Recorder, ping: Any
) -> None:
    every = Schedule("every", "* * * * *", ping)
    environ = {
        "SCHEDULER__JOBS__ADAPTER": "sqlserver",
        "SCHEDULER__JOBS__DSN": dsn,
    }
    default = processes(dsn, every, **environ)
    with Container(Config.load({}, environ)) as container:
        jobs = container.scheduler("jobs")
        jobs.clock, jobs.dispatcher = default.clock, recorder
        jobs.add(every)
        assert names(default.run_pending()) == ["every"]
        assert names(jobs.run_pending()) == ["every"]
    assert [name for name, _ in rows(dsn)] == ["default:every", "jobs:every"]


def test_run_once_reports_slots_claimed_elsewhere(
    dsn: str, processes: Callable[..., SQLServerScheduler], ping: Any
) -> None:
    every = Schedule("every", "* * * * *", ping)
    a, b = processes(dsn, every), processes(dsn, every)
    said: list[str] = []
    assert run_once(a, said.append)["claimed_elsewhere"] == 0
    data = run_once(b, said.append)
    assert data == {"dispatched": [], "failed": [], "claimed_elsewhere": 1}


# --------------------------------------------------------------------------- pruning


def test_old_claims_are_pruned_by_the_first_claim_and_then_hourly(
    dsn: str, processes: Callable[..., SQLServerScheduler], clock: FakeClock, ping: Any
) -> None:
    every = Schedule("every", "* * * * *", ping)
    a = processes(dsn, every)
    assert names(a.run_pending()) == ["every"]  # 10:00 claimed
    clock.advance(hours=23)  # 09:00 the next day: the 10:00 row is 23 hours old, kept
    assert names(a.run_pending()) == ["every"]
    assert len(rows(dsn)) == 2

    clock.advance(hours=1, minutes=30)  # 10:30: a prune is due before the claim
    assert names(a.run_pending()) == ["every"]
    assert [slot for _, slot in rows(dsn)] == ["2025-01-07T09:00Z", "2025-01-07T10:30Z"]

    clock.advance(hours=22)  # 08:30 on the 8th: pruned, nothing is a day old yet
    assert names(a.run_pending()) == ["every"]
    clock.advance(minutes=40)  # 09:10: 09:00 on the 7th is over a day old...
    assert names(a.run_pending()) == ["every"]
    assert len(rows(dsn)) == 4  # ...but the last prune was 40 minutes ago: kept
    clock.advance(minutes=30)  # 09:40: 70 minutes since the last prune
    assert names(a.run_pending()) == ["every"]
    assert [slot for _, slot in rows(dsn)] == [
        "2025-01-07T10:30Z",
        "2025-01-08T08:30Z",
        "2025-01-08T09:10Z",
        "2025-01-08T09:40Z",
    ]

    clock.advance(days=3)  # a process opened long after: its first claim prunes first
    b = processes(dsn, every)
    assert len(rows(dsn)) == 4
    assert names(b.run_pending()) == ["every"]
    assert rows(dsn) == [("default:every", "2025-01-11T09:40Z")]
    assert b.prune() == 0


def test_prune_deletes_only_rows_older_than_keep(
    dsn: str, processes: Callable[..., SQLServerScheduler], clock: FakeClock, ping: Any
) -> None:
    a = processes(dsn, Schedule("every", "* * * * *", ping))
    for _ in range(5):  # 10:00 .. 10:04
        a.run_pending()
        clock.advance(minutes=1)
    assert len(a.claims()) == 5
    now = clock().timestamp()
    assert a.prune(now + DEFAULT_KEEP - 210) == 2  # 10:00 and 10:01 are past keep
    assert [slot for _, slot, _, _ in a.claims()] == [
        "2025-01-06T10:02Z",
        "2025-01-06T10:03Z",
        "2025-01-06T10:04Z",
    ]
    assert DEFAULT_PRUNE_EVERY < DEFAULT_KEEP


def test_a_process_paused_past_keep_does_not_fire_the_pruned_slot_again(
    dsn: str, processes: Callable[..., SQLServerScheduler], clock: FakeClock, ping: Any
) -> None:
    # The rule the embedded adapter follows with claim_ttl, with keep as the lifetime:
    # b pauses before Monday 10:00, a fires it, b wakes 26 hours later. b's first claim
    # would prune a's row (over a day old), so b must not reach back that far.
    weekly = Schedule("weekly", "0 10 * * 1", ping, tz="UTC")
    a, b = processes(dsn, weekly), processes(dsn, weekly)
    clock.advance(minutes=-1)  # 09:59:30
    assert a.run_pending() == [] and b.run_pending() == []
    clock.advance(minutes=1)  # 10:00:30
    assert names(a.run_pending()) == ["weekly"]
    clock.advance(hours=26)  # Tuesday 12:00:30: b's latest missed slot is Monday 10:00
    assert b.run_pending() == []
    assert b.skipped_too_late == 1 and b.claimed_elsewhere == 0
    assert b.catch_up_limit() == DEFAULT_KEEP - 60
    assert rows(dsn) == [("default:weekly", "2025-01-06T10:00Z")]
    clock.advance(hours=-4)  # within the day, the row is there and the slot is taken
    c = processes(dsn, weekly)
    c._entries["weekly"].since = datetime(2025, 1, 6, 9, 59, tzinfo=UTC)
    assert c.run_pending() == [] and c.claimed_elsewhere == 1


# --------------------------------------------------------------------------- configuration


def test_an_empty_dsn_borrows_the_db_service(
    sqlite_dsn: str, clock: FakeClock, recorder: Recorder, ping: Any
) -> None:
    path = sqlite_dsn
    env = {
        "DB__DEFAULT__ADAPTER": "sqlfile",
        "DB__DEFAULT__PATH": str(path),
        "SCHEDULER__DEFAULT__ADAPTER": "sqlserver",
    }
    with Container(Config.load({}, env)) as container:
        scheduler = container.scheduler()
        assert isinstance(scheduler, SQLServerScheduler)
        assert scheduler.database is container.db()
        scheduler.clock, scheduler.dispatcher = clock, recorder
        scheduler.add(Schedule("every", "* * * * *", ping))
        assert names(scheduler.run_pending()) == ["every"]
    assert rows(str(path)) == [("default:every", "2025-01-06T10:00Z")]


def test_the_project_database_alias_is_shared_unless_dedicated(sqlite_dsn: str) -> None:
    env = {
        "DB__DEFAULT__ADAPTER": "sqlfile",
        "DB__DEFAULT__PATH": sqlite_dsn,
        "SCHEDULER__DEFAULT__ADAPTER": "sqlserver",
        "SCHEDULER__DEFAULT__DSN": sqlite_dsn,
    }
    with Container(Config.load({}, env)) as container:
        assert container.scheduler().database.alias == container.db().alias
    env["SCHEDULER__DEFAULT__DEDICATED_POOL"] = "true"
    with Container(Config.load({}, env)) as container:
        assert container.scheduler().database.alias != container.db().alias


def test_a_database_without_the_claims_table_fails_the_open_naming_migrate(
    tmp_path: Path,
) -> None:
    import sqlite3

    from toolkit_batteries.db import MissingTablesError

    path = tmp_path / "empty.sqlite3"
    sqlite3.connect(path).close()
    env = {"SCHEDULER__DEFAULT__ADAPTER": "sqlserver", "SCHEDULER__DEFAULT__DSN": str(path)}
    with Container(Config.load({}, env)) as container, pytest.raises(MissingTablesError) as info:
        container.scheduler()
    assert TABLE in str(info.value) and "manage.py migrate" in str(info.value)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0


def test_a_claim_made_in_a_failing_atomic_block_is_rolled_back(
    dsn: str, processes: Callable[..., SQLServerScheduler], recorder: Recorder, ping: Any
) -> None:
    from django.db import transaction

    scheduler = processes(dsn, Schedule("every", "* * * * *", ping))
    with pytest.raises(RuntimeError), transaction.atomic(using=scheduler.database.alias):
        assert names(scheduler.run_pending()) == ["every"]
        raise RuntimeError("abort")
    assert rows(dsn) == []


def test_the_postgres_alias_opens_the_sqlserver_adapter(postgres_dsn: str) -> None:
    env = {"SCHEDULER__DEFAULT__ADAPTER": "postgres", "SCHEDULER__DEFAULT__DSN": postgres_dsn}
    with Container(Config.load({}, env)) as container:
        scheduler = container.scheduler()
        assert isinstance(scheduler, SQLServerScheduler)
        assert scheduler.database.dialect == "postgresql"


def test_an_unreachable_dsn_fails_the_open_naming_the_scheduler() -> None:
    env = {
        "SCHEDULER__DEFAULT__ADAPTER": "sqlserver",
        "SCHEDULER__DEFAULT__DSN": f"postgresql://postgres:{SECRET}@127.0.0.1:1/jobs",
    }
    with (
        Container(Config.load({}, env)) as container,
        pytest.raises(ServiceUnavailableError) as info,
    ):
        container.scheduler()
    message = str(info.value)
    assert message.startswith("scheduler.default: unavailable")
    assert SECRET not in message and SECRET not in repr(info.value)


def test_a_database_lost_after_open_fails_the_claim_and_dispatches_nothing(
    postgres_dsn: str, processes: Callable[..., SQLServerScheduler], recorder: Recorder, ping: Any
) -> None:
    from tests.conftest import migrate_database
    from toolkit_batteries.db.databases import postgres_entry

    name = f"toolkit_sched_lost_{uuid.uuid4().hex[:12]}"
    lost = f"postgresql://postgres@127.0.0.1:5432/{name}?connect_timeout=2"
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        migrate_database(postgres_entry(lost))
        scheduler = processes(lost, Schedule("every", "* * * * *", ping))
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    (fired,) = scheduler.run_pending()
    assert not fired.ok and fired.unreachable
    assert fired.error and fired.error.startswith("ServiceUnavailableError: scheduler.default")
    assert recorder.calls == []


def test_a_lock_argument_is_refused() -> None:
    with pytest.raises(TypeError, match="not on a lock"):
        SQLServerScheduler(object(), lock=object())


def test_slot_text_is_the_utc_minute() -> None:
    paris = datetime(2025, 1, 6, 11, 0, 42, tzinfo=UTC).astimezone()
    assert slot_text(paris) == "2025-01-06T11:00Z"


def test_the_start_line_names_the_claims_table_without_the_password(postgres_dsn: str) -> None:
    from toolkit_batteries.scheduler.runner import _claims

    dsn = postgres_dsn.replace("postgres@", f"postgres:{SECRET}@")  # trust auth ignores it
    env = {"SCHEDULER__DEFAULT__ADAPTER": "sqlserver", "SCHEDULER__DEFAULT__DSN": dsn}
    with Container(Config.load({}, env)) as container:
        line = _claims(container.scheduler())
    assert line.startswith(f"slots claimed in table {TABLE} (postgresql ")
    assert SECRET not in line and postgres_dsn.rsplit("/", 1)[1] in line
