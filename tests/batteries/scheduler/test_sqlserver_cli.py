"""``toolkit schedule:run`` with the ``sqlserver`` scheduler: two real processes, one claim.

A rendered project selects the adapter from the environment, with its claims in a SQLite
file of their own (a ``DATABASES`` alias the settings derive, migrated by
``toolkit db migrate`` with the project's database); jobs go to the db queue on the
project's database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ...cli.conftest import base_env, render_project, run_toolkit

JOBS = """\
from toolkit_batteries.queue.jobs import job


@job
def noop() -> None:
    pass
"""
SCHEDULES = """\
from toolkit_batteries.scheduler import Schedule

SCHEDULES = [
    Schedule("every-minute", "* * * * *", "api.jobs.noop"),
    Schedule("new-year", "0 0 1 1 *", "api.jobs.noop"),
]
"""


def test_list_and_once_in_two_processes_claim_each_slot_once(tmp_path: Path) -> None:
    root = render_project(tmp_path / "demo")
    (root / "api" / "jobs.py").write_text(JOBS, encoding="utf-8")
    (root / "api" / "schedules.py").write_text(SCHEDULES, encoding="utf-8")
    claims = tmp_path / "claims.sqlite3"
    env = base_env(
        QUEUE__DEFAULT__ADAPTER="db",
        SCHEDULER__DEFAULT__ADAPTER="sqlserver",
        SCHEDULER__DEFAULT__DSN=str(claims),
    )

    for battery in ("queue/db", "scheduler/sqlserver"):  # their apps, as a user adds them
        added = run_toolkit("add", battery, cwd=root, env=env)
        assert added.returncode == 0, added
    migrated = run_toolkit("--json", "db", "migrate", cwd=root, env=env)
    assert migrated.returncode == 0, migrated

    ran = run_toolkit("--json", "schedule:run", "--list", cwd=root, env=env)
    assert ran.returncode == 0, ran
    assert [row["name"] for row in ran.json["data"]["schedules"]] == ["every-minute", "new-year"]

    first = run_toolkit("--json", "schedule:run", "--once", cwd=root, env=env)
    second = run_toolkit("--json", "schedule:run", "--once", cwd=root, env=env)
    assert first.returncode == 0 and second.returncode == 0, (first, second)
    runs = [first.json["data"], second.json["data"]]
    assert [d["name"] for d in runs[0]["dispatched"]] == ["every-minute"]
    conn = sqlite3.connect(claims)
    try:
        slots = [row[0] for row in conn.execute("SELECT slot FROM toolkit_scheduler_claim")]
    finally:
        conn.close()
    # One dispatch per claimed slot; the second process skips the first one's slot unless
    # the minute turned between the two runs.
    assert sum(len(run["dispatched"]) for run in runs) == len(slots) == len(set(slots))
    if len(slots) == 1:
        assert runs[1]["dispatched"] == [] and runs[1]["claimed_elsewhere"] == 1
