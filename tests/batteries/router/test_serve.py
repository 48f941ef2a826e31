"""A real ``toolkit serve`` of a rendered project, under each router adapter, no flags.

The adapter comes from the environment (``ROUTER__DEFAULT__ADAPTER``), the way a
deployment sets it; ``toolkit serve`` is started without ``--asgi``. ``stdhttp`` must be
gunicorn's sync worker answering as gunicorn; ``router_a`` gunicorn with the uvicorn worker
class, answering as uvicorn.
"""

from __future__ import annotations

import signal
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.cli.conftest import SCRIPT, render_project
from tests.cli.test_serve import start, stop
from tests.ports import free_port

EXPECTED = {
    # adapter: (gunicorn's "Using worker" line, the Server header)
    "stdhttp": ("Using worker: sync", "gunicorn"),
    "router_a": ("Using worker: uvicorn_worker.UvicornWorker", "uvicorn"),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_project(tmp_path_factory.mktemp("router") / "demo")


def fetch(url: str, proc, timeout: float = 30) -> tuple[int, dict[str, str], bytes]:
    """GET ``url`` once the server answers; fail if it exits first or never answers."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the server exited early ({proc.returncode}): {proc.communicate()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers), exc.read()
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"{url} did not answer within {timeout}s")


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


@pytest.mark.parametrize("adapter", ["stdhttp", "router_a"])
def test_toolkit_serve_runs_the_adapters_server(project: Path, adapter: str, monkeypatch) -> None:
    worker_line, server = EXPECTED[adapter]
    port = free_port()
    monkeypatch.setenv("ROUTER__DEFAULT__ADAPTER", adapter)  # start() copies os.environ
    proc = start([str(SCRIPT), "serve", "--host", "127.0.0.1", "--port", str(port)], project)
    try:
        status, headers, body = fetch(f"http://127.0.0.1:{port}/healthz", proc)
        assert status == 200 and b'"ok"' in body
        assert {k.lower(): v for k, v in headers.items()}.get("server") == server
        workers = children(proc.pid)
        assert len(workers) == 1  # gunicorn's master (the toolkit process) forked one worker
        cmdline = Path(f"/proc/{workers[0]}/cmdline").read_bytes()
        assert b"toolkit" in cmdline and b"serve" in cmdline
    finally:
        code, _, stderr = stop(proc, signal.SIGTERM)
    assert code == 0, stderr
    assert worker_line in stderr
    assert f"serving demo on http://127.0.0.1:{port}/" in stderr
