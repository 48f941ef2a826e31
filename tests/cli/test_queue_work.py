"""``toolkit queue:work``: the queue worker, on the db queue adapter over the project's SQLite.

Jobs are dispatched by one process (``manage.py shell``) and run by another (the CLI),
so the test goes through a real, durable queue: ``QUEUE__DEFAULT__ADAPTER=db`` borrows
the project's ``db`` service (its SQLite file).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from toolkit_batteries.queue.management.commands.queue_work import Command

from .conftest import Ran, base_env, render_project

JOBS = """\
from pathlib import Path

from toolkit_batteries.queue.jobs import job


@job
def touch(path: str, text: str = "ran") -> None:
    Path(path).write_text(text)
"""
FLAGS = ("--queue", "--concurrency", "--pool", "--once", "--max-jobs", "--stop-when-empty")


def env(**extra: str) -> dict[str, str]:
    """Return the run environment: the db queue, polled briefly (--stop-when-empty ends fast)."""
    return base_env(
        **{"QUEUE__DEFAULT__ADAPTER": "db", "QUEUE__DEFAULT__POLL_TIMEOUT": "300ms", **extra}
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = render_project(tmp_path_factory.mktemp("queue_work") / "demo")
    (root / "api" / "jobs.py").write_text(JOBS, encoding="utf-8")
    # The db queue's tables come from migrations, as in a deployed project.
    migrate = [sys.executable, "manage.py", "migrate", "--no-input"]
    subprocess.run(migrate, cwd=root, env=env(), check=True, capture_output=True, timeout=120)
    return root


def dispatch(project: Path, *calls: tuple[str, str]) -> None:
    """Dispatch ``touch(path, text)`` per call from another process."""
    code = "from api.jobs import touch\n" + "".join(
        f"touch.dispatch({path!r}, {text!r})\n" for path, text in calls
    )
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=project,
        env=env(),
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def test_jobs_dispatched_elsewhere_run_in_text_and_json_modes(
    toolkit: Callable[..., Ran], project: Path, tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    dispatch(project, (str(first), "one"), (str(second), "two"))

    ran = toolkit("queue:work", "--once", cwd=project, env=env())
    assert ran.returncode == 0, ran
    assert first.read_text() == "one" and not second.exists()
    assert "queue_work: db queue.default, queues default" in ran.stdout
    assert "stopped after 1 job(s): 1 succeeded" in ran.stdout

    ran = toolkit("--json", "queue:work", "--stop-when-empty", cwd=project, env=env())
    assert ran.returncode == 0, ran
    envelope = ran.json
    assert envelope["ok"] is True and envelope["command"] == "queue:work"
    assert any("stopped after 1 job(s): 1 succeeded" in line for line in envelope["data"]["output"])
    assert envelope["breadcrumbs"] == ["toolkit schedule:run"]
    assert second.read_text() == "two"


def test_help_lists_every_flag_of_the_management_command(toolkit: Callable[..., Ran]) -> None:
    ran = toolkit("queue:work", "--help")
    assert ran.returncode == 0
    parser = Command().create_parser("manage.py", "queue_work")
    own = {s for a in parser._actions for s in a.option_strings if s.startswith("--")}
    mirrored = own - {"--version", "--verbosity", "--settings", "--pythonpath", "--traceback"}
    mirrored -= {"--no-color", "--force-color", "--skip-checks", "--help"}
    assert set(FLAGS) <= mirrored
    for flag in mirrored:
        assert flag in ran.stdout, flag


@pytest.mark.parametrize(
    ("args", "extra", "code", "message"),
    [
        (("--concurrency", "0"), {}, 2, "must be at least 1"),
        (("--pool", "fibers"), {}, 2, "invalid choice"),
        (("--once",), {"QUEUE__DEFAULT__ADAPTER": "nope"}, 3, 'unknown adapter "nope"'),
        (
            ("--once",),
            {"QUEUE__DEFAULT__ADAPTER": "kvserver", "QUEUE__DEFAULT__ADDR": "127.0.0.1:1"},
            5,
            "unavailable",
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
    ran = toolkit("--json", "queue:work", *args, cwd=project, env=env(**extra))
    assert ran.returncode == code, ran
    assert ran.json["exitCode"] == code and message in ran.json["error"]


def test_outside_a_project(toolkit: Callable[..., Ran], tmp_path: Path) -> None:
    ran = toolkit("queue:work", "--once", cwd=tmp_path)
    assert ran.returncode == 1
    assert "toolkit queue:work: not inside a project" in ran.stderr and "hint:" in ran.stderr
