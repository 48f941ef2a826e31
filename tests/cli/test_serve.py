"""``toolkit serve``: gunicorn in the background on a free port, stopped by a signal.

One migrated project serves three times: the CLI with flags (text mode, SIGTERM), the
management command with a ``gunicorn.conf.py`` (SIGINT), and the CLI under ``--json``
with the configuration file and a ``--port`` override (SIGTERM).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ports import free_port

from .conftest import SCRIPT, Ran, base_env, render_project

CONF = """\
wsgi_app = "demo.wsgi:application"
bind = "127.0.0.1:{port}"
workers = 1
graceful_timeout = 5
accesslog = "-"


def on_starting(server):
    with open({marker!r}, "w") as fh:
        fh.write(server.cfg.proc_name)
"""


def get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def wait_for(url: str, proc: subprocess.Popen[str], timeout: float = 30) -> int:
    """Poll ``url`` until it answers; fail if the server exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the server exited early ({proc.returncode}): {proc.communicate()}")
        try:
            return get(url)
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"{url} did not answer within {timeout}s")


def stop(proc: subprocess.Popen[str], signum: int) -> tuple[int, str, str]:
    """Send ``signum``; return the exit status (within 10 s) and the output."""
    proc.send_signal(signum)
    try:
        stdout, stderr = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        pytest.fail(f"the server ignored signal {signum}: {stderr}")
    return proc.returncode, stdout, stderr


def start(argv: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        argv,
        cwd=cwd,
        # Production settings, served over plain HTTP on the loopback interface.
        env=base_env(DJANGO_SECURE_SSL_REDIRECT="0"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = render_project(tmp_path_factory.mktemp("serve") / "demo")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input"],
        cwd=root,
        env=base_env(),
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    return root


def test_serves_healthz_and_sigterm_exits_0(project: Path) -> None:
    port = free_port()
    proc = start([str(SCRIPT), "serve", "--host", "127.0.0.1", "--port", str(port)], project)
    try:
        assert wait_for(f"http://127.0.0.1:{port}/healthz", proc) == 200
        assert get(f"http://127.0.0.1:{port}/nope") == 404
    finally:
        code, stdout, stderr = stop(proc, signal.SIGTERM)
    assert code == 0, stderr
    assert stdout == ""  # the access log and gunicorn's own log go to stderr
    line = f"serving demo on http://127.0.0.1:{port}/ (SIGTERM or Ctrl-C stops it)"
    assert line in stderr
    assert '"GET /healthz HTTP/1.1" 200' in stderr
    with pytest.raises(OSError):
        get(f"http://127.0.0.1:{port}/healthz")


def test_gunicorn_conf_is_honoured_and_flags_override_its_bind(project: Path) -> None:
    conf_port, flag_port = free_port(), free_port()
    marker = project / "started"
    conf = project / "gunicorn.conf.py"
    conf.write_text(CONF.format(port=conf_port, marker=str(marker)), encoding="utf-8")
    try:
        # manage.py serve, no flags: the configuration's bind.
        proc = start([sys.executable, "manage.py", "serve"], project)
        try:
            assert wait_for(f"http://127.0.0.1:{conf_port}/healthz", proc) == 200
        finally:
            code, _, stderr = stop(proc, signal.SIGINT)
        assert code == 0, stderr
        assert f"serving demo on http://127.0.0.1:{conf_port}/" in stderr
        assert marker.read_text() == "demo"  # the file's hook ran; proc_name defaulted

        # toolkit --json serve --port: the file's host, the flag's port.
        proc = start([str(SCRIPT), "--json", "serve", "--port", str(flag_port)], project)
        try:
            assert wait_for(f"http://127.0.0.1:{flag_port}/healthz", proc) == 200
        finally:
            code, stdout, stderr = stop(proc, signal.SIGTERM)
        assert code == 0, stderr
        assert stdout.strip() == (
            '{"ok":true,"command":"serve","exitCode":0,'
            '"data":{"project":"demo","stopped":true},'
            '"breadcrumbs":["toolkit doctor","toolkit routes"]}'
        )
        assert f"serving demo on http://127.0.0.1:{flag_port}/" in stderr
        assert '"GET /healthz HTTP/1.1" 200' in stderr  # "-" is stderr: stdout is the envelope
    finally:
        conf.unlink()
        marker.unlink(missing_ok=True)


def test_a_broken_gunicorn_conf_exits_3(toolkit: Callable[..., Ran], project: Path) -> None:
    conf = project / "gunicorn.conf.py"
    conf.write_text("bind = (\n", encoding="utf-8")
    try:
        ran = toolkit("--json", "serve", "--port", str(free_port()), cwd=project)
    finally:
        conf.unlink()
    assert ran.returncode == 3, ran
    assert "invalid gunicorn configuration" in ran.json["error"]


def test_missing_gunicorn_names_the_extra(
    toolkit: Callable[..., Ran], project: Path, tmp_path: Path
) -> None:
    shadow = tmp_path / "gunicorn"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('gunicorn is not here')\n")
    ran = toolkit("serve", cwd=project, env=base_env(PYTHONPATH=str(tmp_path)))
    assert ran.returncode == 1, ran
    assert 'gunicorn is not installed (the "serve" extra)' in ran.stderr
    assert 'pip install "django-toolkit[serve]"' in ran.stderr


def test_outside_a_project_bad_port_and_help(toolkit: Callable[..., Ran], tmp_path: Path) -> None:
    ran = toolkit("serve", cwd=tmp_path)
    assert ran.returncode == 1
    assert "toolkit serve: not inside a project" in ran.stderr and "hint:" in ran.stderr
    ran = toolkit("--json", "serve", cwd=tmp_path)
    assert ran.returncode == 1 and ran.json["exitCode"] == 1 and "toolkit new" in ran.json["hint"]
    ran = toolkit("serve", "--port", "0", cwd=tmp_path)
    assert ran.returncode == 2 and "between 1 and 65535" in ran.stderr
    ran = toolkit("serve", "--help")
    assert ran.returncode == 0
    for flag in ("--host", "--port", "--workers", "--reload", "gunicorn.conf.py"):
        assert flag in ran.stdout


def test_asgi_serves_the_asgi_application_on_uvicorn_workers(project: Path) -> None:
    # The generated gunicorn.conf.py names the WSGI app; --asgi must not load that one.
    (project / "gunicorn.conf.py").write_text('wsgi_app = "demo.wsgi:application"\n')
    port = free_port()
    proc = start(
        [str(SCRIPT), "serve", "--asgi", "--host", "127.0.0.1", "--port", str(port)], project
    )
    try:
        assert wait_for(f"http://127.0.0.1:{port}/healthz", proc) == 200
        assert get(f"http://127.0.0.1:{port}/nope") == 404
    finally:
        code, _, stderr = stop(proc, signal.SIGTERM)
        (project / "gunicorn.conf.py").unlink()
    assert code == 0, stderr
    assert "uvicorn" in stderr.lower()  # the worker class announces itself in gunicorn's log
