"""A rendered project runs its jobs on the defaults: no queue variable, any job queue.

The template's queue is the ``db`` adapter on the project's SQLite file, so a job that
one process dispatches (here ``manage.py shell``, as the web server would) reaches a
``toolkit queue:work`` process; and a worker started without ``--queue`` works every queue
the schema's jobs name (here ``emails``), not only ``default``. When the project pins
the workers' queues (``TOOLKIT_JOBS__QUEUES``) and a job's queue is not among them,
``toolkit doctor`` says so.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import base_env, render_project, run_toolkit

SCHEMA = """\
// Writes its text into a file: the test reads what the worker did.
job SendDigest(path: string, text: string) {
  queue: emails
  retry: max_attempts(1)
}
"""
BODY = """    from pathlib import Path

    Path(path).write_text(text)"""


def _env(**extra: str) -> dict[str, str]:
    # Nothing about the queue: the template's defaults are under test.
    return base_env(QUEUE__DEFAULT__POLL_TIMEOUT="300ms", **extra)


def _project(tmp_path: Path) -> Path:
    root = render_project(tmp_path / "demo")
    (root / "schema" / "jobs.toolkit").write_text(SCHEMA)
    compiled = run_toolkit("compile", cwd=root, env=_env())
    assert compiled.returncode == 0, compiled
    jobs = root / "api" / "jobs.py"
    jobs.write_text(jobs.read_text().replace("    raise NotImplementedError", BODY))
    migrate = [sys.executable, "manage.py", "migrate", "--no-input"]
    subprocess.run(migrate, cwd=root, env=_env(), check=True, capture_output=True, timeout=120)
    return root


def test_a_job_dispatched_by_another_process_on_its_own_queue_runs_on_the_defaults(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    marker = tmp_path / "digest.txt"
    dispatch = (
        "from api.jobs import send_digest\n"
        f"send_digest.dispatch({str(marker)!r}, 'from-another-process')\n"
    )
    shell = [sys.executable, "manage.py", "shell", "-c", dispatch]
    done = subprocess.run(shell, cwd=root, env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()  # queued, not run
    worked = run_toolkit("queue:work", "--stop-when-empty", cwd=root, env=_env())
    assert worked.returncode == 0, worked
    assert "db queue.default, queues default, emails" in worked.stdout, worked.stdout
    assert marker.read_text() == "from-another-process"


def test_doctor_warns_about_a_job_on_a_queue_no_worker_serves(tmp_path: Path) -> None:
    root = _project(tmp_path)
    served = run_toolkit("--json", "doctor", cwd=root, env=_env())
    assert served.returncode == 0, served
    assert "warnings" not in served.json["data"]
    pinned = run_toolkit("--json", "doctor", cwd=root, env=_env(TOOLKIT_JOBS__QUEUES="default"))
    assert pinned.returncode == 0, pinned
    (warning,) = pinned.json["data"]["warnings"]
    assert 'queue "emails", which no worker serves' in warning
    assert "toolkit queue:work --queue emails" in warning
    on_memory = run_toolkit("doctor", cwd=root, env=_env(QUEUE__DEFAULT__ADAPTER="memory"))
    assert "warning: 1 job(s) dispatch onto the memory queue" in on_memory.stdout, on_memory
