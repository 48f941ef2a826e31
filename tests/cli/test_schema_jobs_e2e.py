"""A schema's ``job`` and ``schedule`` in a real project: compile, schedule:run, queue:work.

The project is rendered from the template; a schema file adds a job and a schedule that
fires every minute. ``toolkit compile`` writes the job's stub into ``api/jobs.py`` and the
scheduler entries; the test fills the stub in (as a user would), ``schedule:run --once``
dispatches the job into the db queue and ``queue:work`` runs it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import base_env, render_project, run_toolkit

SCHEMA = """\
// Writes a marker file.
job Touch(path: string, text: string) {
  queue: default
  retry: max_attempts(2), backoff(exponential, base: 1s)
}

schedule EveryMinute {
  cron: "* * * * *"
  dispatch: Touch("{marker}", "from-schedule")
}
"""
BODY = """    from pathlib import Path

    Path(path).write_text(text)"""


def env() -> dict[str, str]:
    return base_env(QUEUE__DEFAULT__ADAPTER="db", QUEUE__DEFAULT__POLL_TIMEOUT="300ms")


def test_a_schema_schedule_fires_its_job_through_the_queue(tmp_path: Path) -> None:
    root = render_project(tmp_path / "demo")
    marker = root / "marker.txt"
    (root / "schema" / "jobs.toolkit").write_text(SCHEMA.replace("{marker}", str(marker)))
    ran = run_toolkit("compile", cwd=root, env=env())
    assert ran.returncode == 0, ran
    for created in ("api/jobs.py", "api/schedules.py", "api/generated/jobs.py"):
        assert f"create {created}" in ran.stdout, ran.stdout
    jobs = root / "api" / "jobs.py"
    stub = jobs.read_text()
    assert '@job(**JOB_OPTIONS["Touch"])\ndef touch(path: str, text: str) -> None:' in stub
    jobs.write_text(stub.replace("    raise NotImplementedError", BODY))
    again = run_toolkit("compile", cwd=root, env=env())
    assert again.returncode == 0, again
    assert "api/jobs.py" not in again.stdout  # nothing to append: the user's code is kept
    assert BODY in jobs.read_text()

    migrate = [sys.executable, "manage.py", "migrate", "--no-input"]
    subprocess.run(migrate, cwd=root, env=env(), check=True, capture_output=True, timeout=120)
    listed = run_toolkit("--json", "schedule:run", "--list", cwd=root, env=env())
    assert listed.returncode == 0, listed
    assert "EveryMinute" in listed.stdout
    fired = run_toolkit("--json", "schedule:run", "--once", cwd=root, env=env())
    assert fired.returncode == 0, fired
    assert "EveryMinute" in fired.stdout
    assert not marker.exists()  # dispatched, not run: a worker runs it
    worked = run_toolkit("queue:work", "--stop-when-empty", cwd=root, env=env())
    assert worked.returncode == 0, worked
    assert marker.read_text() == "from-schedule"
