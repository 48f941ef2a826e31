"""``toolkit schedule:run``: list, fire once into a real queue, loop until SIGTERM.

The project's ``api/schedules.py`` and a module named by ``TOOLKIT_SCHEDULES`` define
the schedules; jobs go to the db queue adapter on the project's SQLite file, where
``toolkit queue:work`` (another process) runs them.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import SCRIPT, Ran, base_env, render_project

JOBS = """\
from pathlib import Path

from toolkit_batteries.queue.jobs import job


@job
def touch(path: str, text: str = "ran") -> None:
    Path(path).write_text(text)
"""
SCHEDULES = """\
from toolkit_batteries.scheduler import Schedule

from .jobs import touch

SCHEDULES = [
    Schedule("every-minute", "* * * * *", touch, args=("{marker}",), kwargs={{"text": "cron"}}),
    Schedule("new-year", "0 0 1 1 *", "api.jobs.touch", args=("{never}",)),
]
"""
EXTRA = """\
from toolkit_batteries.scheduler import Schedule

SCHEDULES = [
    Schedule("paris-nine", "0 9 * * 1-5", "api.jobs.touch", args=("x",), tz="Europe/Paris"),
]
"""
BAD = {
    "unknown_job": 'SCHEDULES = [Schedule("ghost", "* * * * *", "api.jobs.nothing")]',
    "bad_cron": 'SCHEDULES = [Schedule("bad", "99 * * * *", "api.jobs.touch")]',
}
SETTINGS = """
TOOLKIT_SCHEDULES = [os.environ.get("EXTRA_SCHEDULES", "extra_schedules")]
"""


def env(**extra: str) -> dict[str, str]:
    return base_env(
        **{"QUEUE__DEFAULT__ADAPTER": "db", "QUEUE__DEFAULT__POLL_TIMEOUT": "300ms", **extra}
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = render_project(tmp_path_factory.mktemp("schedule_run") / "demo")
    (root / "api" / "jobs.py").write_text(JOBS, encoding="utf-8")
    text = SCHEDULES.format(marker=root / "marker", never=root / "never")
    (root / "api" / "schedules.py").write_text(text, encoding="utf-8")
    (root / "extra_schedules.py").write_text(EXTRA, encoding="utf-8")
    for name, body in BAD.items():
        header = "from toolkit_batteries.scheduler import Schedule\n\n"
        (root / f"{name}.py").write_text(header + body + "\n", encoding="utf-8")
    with (root / "demo" / "settings.py").open("a", encoding="utf-8") as fh:
        fh.write(SETTINGS)
    # The db queue's tables come from migrations, as in a deployed project.
    migrate = [sys.executable, "manage.py", "migrate", "--no-input"]
    subprocess.run(migrate, cwd=root, env=env(), check=True, capture_output=True, timeout=120)
    return root


def test_list_in_text_json_and_through_manage_py(
    toolkit: Callable[..., Ran], project: Path
) -> None:
    ran = toolkit("schedule:run", "--list", cwd=project, env=env())
    assert ran.returncode == 0, ran
    lines = ran.stdout.splitlines()
    assert lines[0].split() == ["NAME", "CRON", "JOB", "NEXT", "RUN"]
    assert [line.split()[0] for line in lines[1:]] == ["every-minute", "new-year", "paris-nine"]
    assert "api.jobs.touch" in lines[1] and lines[2].endswith("-01-01T00:00:00+00:00")

    ran = toolkit("--json", "schedule:run", "--list", cwd=project, env=env())
    assert ran.returncode == 0, ran
    data = ran.json["data"]
    assert data["timezone"] == "UTC"
    rows = {row["name"]: row for row in data["schedules"]}
    assert rows["every-minute"]["cron"] == "* * * * *"
    assert rows["every-minute"]["kwargs"] == {"text": "cron"}
    assert rows["new-year"]["next_run"].endswith("-01-01T00:00:00+00:00")
    assert rows["paris-nine"]["timezone"] == "Europe/Paris"
    assert rows["paris-nine"]["next_run"].endswith("T09:00:00+01:00") or rows["paris-nine"][
        "next_run"
    ].endswith("T09:00:00+02:00")

    managed = subprocess.run(
        [sys.executable, "manage.py", "schedule_run", "--list"],
        cwd=project,
        env=env(),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert managed.returncode == 0, managed.stderr
    assert [line.split()[0] for line in managed.stdout.splitlines()] == [
        line.split()[0] for line in lines
    ]


def test_once_dispatches_due_jobs_that_queue_work_then_runs(
    toolkit: Callable[..., Ran], project: Path
) -> None:
    ran = toolkit("--json", "schedule:run", "--once", cwd=project, env=env())
    assert ran.returncode == 0, ran
    data = ran.json["data"]
    assert [d["name"] for d in data["dispatched"]] == ["every-minute"]
    assert data["dispatched"][0]["job"] == "api.jobs.touch" and data["failed"] == []
    assert ran.json["breadcrumbs"] == ["toolkit queue:work"]

    ran = toolkit("schedule:run", "--once", cwd=project, env=env())
    assert ran.returncode == 0, ran
    assert "every-minute: dispatched api.jobs.touch (id " in ran.stdout

    worked = toolkit("queue:work", "--stop-when-empty", cwd=project, env=env())
    assert worked.returncode == 0, worked
    assert "stopped after 2 job(s): 2 succeeded" in worked.stdout
    assert (project / "marker").read_text() == "cron"
    assert not (project / "never").exists()


def test_the_loop_stops_on_sigterm_with_exit_0(project: Path) -> None:
    proc = subprocess.Popen(
        [str(SCRIPT), "schedule:run", "--tick", "0.2"],
        cwd=project,
        env=env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline() if proc.stdout else ""
        assert first.startswith("schedule_run: embedded scheduler.default, 3 schedule(s)"), first
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        rest = proc.stdout.read() if proc.stdout else ""
        assert "schedule_run: stopped after" in rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(
    ("args", "extra", "code", "message"),
    [
        (("--once", "--list"), {}, 2, "not allowed with"),
        (("--tick", "0"), {}, 2, "must be positive"),
        (
            ("--list",),
            {"SCHEDULER__DEFAULT__ADAPTER": "nosuch"},
            3,
            "available: embedded, postgres, postgresql, sqlserver",
        ),
        (("--list",), {"EXTRA_SCHEDULES": "unknown_job"}, 3, "api.jobs.nothing"),
        (("--list",), {"EXTRA_SCHEDULES": "bad_cron"}, 3, "invalid cron expression"),
        (
            ("--once",),
            {"QUEUE__DEFAULT__ADAPTER": "kvserver", "QUEUE__DEFAULT__ADDR": "127.0.0.1:1"},
            5,
            "1 of 1 dispatch(es) failed",
        ),
    ],
)
def test_error_exit_codes(
    toolkit: Callable[..., Ran],
    project: Path,
    args: tuple[str, ...],
    extra: dict[str, str],
    code: int,
    message: str,
) -> None:
    ran = toolkit("--json", "schedule:run", *args, cwd=project, env=env(**extra))
    assert ran.returncode == code, ran
    assert ran.json["exitCode"] == code and message in ran.json["error"], ran.json
    if code == 5:
        assert ran.json["data"]["failed"][0]["error"].startswith("ServiceUnavailableError")


def test_outside_a_project_and_help(toolkit: Callable[..., Ran], tmp_path: Path) -> None:
    ran = toolkit("schedule:run", "--list", cwd=tmp_path)
    assert ran.returncode == 1 and "not inside a project" in ran.stderr
    ran = toolkit("--json", "schedule:run", "--once", cwd=tmp_path)
    assert ran.returncode == 1 and json.loads(ran.stdout)["hint"]
    ran = toolkit("schedule:run", "--help")
    assert ran.returncode == 0
    for flag in ("--once", "--list", "--tick SECONDS", "minute boundary"):
        assert flag in ran.stdout
