"""``toolkit dev``: runserver with its reloader, recompiling the schema as it changes.

One run starts on a broken schema (the first compile is advisory), is fixed with a new
rpc (compiled, restarted, the route answers), is broken again (diagnostics, the server
keeps answering) and stops on SIGTERM. A second run checks ``--json`` and SIGINT.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ports import free_port

from .conftest import SCRIPT, Ran, base_env, render_project

WATCHING = "toolkit dev: watching schema/ and the project's code for changes (Ctrl-C to stop)"
PING = """
service PingService {
  rpc Ping() -> Note {
    http: GET "/v1/ping"
    auth: required
  }
}
"""


def status(url: str) -> int | None:
    """Return the HTTP status of ``url``, or ``None`` while nothing listens."""
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return None


def poll(
    check: Callable[[], bool], proc: subprocess.Popen[bytes], what: str, timeout: float = 30
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"toolkit dev exited ({proc.returncode}) while waiting for {what}")
        if check():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def start(project: Path, logs: Path, *args: str) -> subprocess.Popen[bytes]:
    out = (logs / "stdout").open("wb")
    err = (logs / "stderr").open("wb")
    return subprocess.Popen(
        [str(SCRIPT), *args],
        cwd=project,
        env=base_env(),
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=err,
    )


def stop(proc: subprocess.Popen[bytes], signum: int) -> int:
    proc.send_signal(signum)
    try:
        return proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"toolkit dev ignored signal {signum}")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return render_project(tmp_path / "demo")


def test_recompiles_on_change_restarts_on_success_keeps_serving_on_failure(
    project: Path, tmp_path: Path
) -> None:
    schema = project / "schema" / "app.toolkit"
    good = schema.read_text(encoding="utf-8")
    schema.write_text(good + "\nentity {\n", encoding="utf-8")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    stderr = tmp_path / "stderr"
    proc = start(project, tmp_path, "dev", "--port", str(port))
    try:
        # The broken first compile is advisory: diagnostics, and the server starts anyway.
        poll(lambda: status(f"{base}/healthz") == 200, proc, "the server")
        errors = stderr.read_text()
        assert "app.toolkit:" in errors and "[parse]" in errors
        assert "the schema has 1 error(s); nothing was written" in errors
        assert not (project / "api" / "generated").exists()
        assert status(f"{base}/v1/ping") == 404

        schema.write_text(good + PING, encoding="utf-8")
        poll(lambda: status(f"{base}/v1/ping") == 401, proc, "the recompiled route")
        assert (project / "api" / "generated" / "urls.py").is_file()
        assert status(f"{base}/v1/notes") == 401
        # The compile wrote api's first migration; dev applied it before the restart.
        with sqlite3.connect(project / "db.sqlite3") as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        assert "notes" in tables

        before = stderr.read_text().count("[parse]")
        schema.write_text(good + PING + "\nservice {\n", encoding="utf-8")
        poll(lambda: "keeps running" in stderr.read_text(), proc, "the diagnostics")
        assert stderr.read_text().count("[parse]") == before + 1
        assert status(f"{base}/v1/ping") == 401  # still the last good version
    finally:
        code = stop(proc, signal.SIGTERM)
    assert code == 0, stderr.read_text()
    stdout = (tmp_path / "stdout").read_text()
    assert WATCHING in stdout
    assert "toolkit dev: the schema changed; compiling" in stdout
    assert "toolkit dev: compiled; restarting the server" in stdout
    assert "toolkit dev: Applying api.0001_initial... OK" in stdout
    assert "toolkit dev: Applying accounts.0001_initial... OK" in stdout  # at start
    deadline = time.monotonic() + 10  # the serving child is gone too, soon after
    while status(f"{base}/healthz") is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert status(f"{base}/healthz") is None


def test_json_mode_keeps_stdout_for_the_envelope(project: Path, tmp_path: Path) -> None:
    port = free_port()
    proc = start(project, tmp_path, "--json", "dev", "--port", str(port), "--no-migrate")
    try:
        poll(lambda: status(f"http://127.0.0.1:{port}/healthz") == 200, proc, "the server")
    finally:
        code = stop(proc, signal.SIGINT)
    assert code == 0
    stdout = (tmp_path / "stdout").read_text()
    assert stdout == (
        '{"ok":true,"command":"dev","exitCode":0,'
        f'"data":{{"host":"127.0.0.1","port":{port},"stopped":true}},'
        '"breadcrumbs":["toolkit serve","toolkit check"]}\n'
    )
    errors = (tmp_path / "stderr").read_text()
    assert "Starting development server" in errors  # runserver's banner, moved to stderr
    assert (project / "api" / "generated" / "views.py").is_file()  # the first compile
    # --no-migrate: the new migration is written, not applied (runserver says so).
    assert (project / "api" / "migrations" / "0001_initial.py").is_file()
    assert "unapplied migration(s)" in errors
    with sqlite3.connect(project / "db.sqlite3") as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert "notes" not in tables


def test_outside_a_project_bad_port_and_help(toolkit: Callable[..., Ran], tmp_path: Path) -> None:
    ran = toolkit("dev", cwd=tmp_path)
    assert ran.returncode == 1 and "toolkit dev: not inside a project" in ran.stderr
    ran = toolkit("--json", "dev", "--port", "70000", cwd=tmp_path)
    assert ran.returncode == 2 and ran.json["exitCode"] == 2
    ran = toolkit("dev", "--help")
    assert ran.returncode == 0
    for text in ("--host", "--port", "127.0.0.1:8000", "schema/**/*.toolkit"):
        assert text in ran.stdout
