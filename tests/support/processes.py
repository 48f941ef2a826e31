"""Find and stop the product servers the tests start (OpenBao, localstripe, oidc-provider) cleanly,
and wait (bounded) for what a server or a background thread does: the suite's one ``wait_for``.

Each runs in its own session (``start_new_session=True``) so a wrapper script and the
server it execs stop together.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest

from tests.ports import free_port

T = TypeVar("T")


class _Startable(Protocol):
    def start(self) -> Any: ...
    def stop(self) -> Any: ...


S = TypeVar("S", bound=_Startable)


def stop_group(process: subprocess.Popen | None, timeout: float = 10) -> None:
    """SIGTERM ``process``'s group, SIGKILL it after ``timeout`` s; wait for the process."""
    if process is None or process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=timeout)


def venv_script(name: str, installed_by: str) -> str:
    """Return console script ``name`` of this environment (beside Python), else on PATH."""
    beside_python = Path(sys.executable).with_name(name)
    found = str(beside_python) if beside_python.exists() else shutil.which(name)
    if not found:
        raise RuntimeError(f"`{name}` is missing: `make venv` installs {installed_by}")
    return found


def wait_until(condition: Callable[[], object], timeout: float) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` s pass; return whether it held.

    Polls every 2 ms at first, backing off to every 50 ms, so a condition met at once
    costs almost nothing and a slow one does not spin a shared core.
    """
    return bool(_poll(condition, timeout))


def wait_for(condition: Callable[[], T], timeout: float = 5.0, what: str = "the condition") -> T:
    """Poll ``condition`` until it returns something truthy and return that; else fail.

    The failure names ``what`` was awaited and for how long.
    """
    value = _poll(condition, timeout)
    if not value:
        pytest.fail(f"timed out after {timeout}s waiting for {what}")
    return value


def _poll(condition: Callable[[], T], timeout: float) -> T:
    deadline = time.monotonic() + timeout
    interval = 0.002
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))
        interval = min(interval * 2, 0.05)


def serving(server: S) -> Iterator[S]:
    """Start ``server``, yield it, and stop it however the test ends (``yield from`` it).

    The body of every fixture that runs a local server for its tests: ``start()`` may
    return the server or ``None``; ``stop()`` runs even when the test failed.
    """
    server.start()
    try:
        yield server
    finally:
        server.stop()


def await_start(
    process: subprocess.Popen, ready: Callable[[], bool], name: str, log: Path, timeout: float
) -> None:
    """Poll ``ready()`` (an ``OSError`` counts as not yet) until the server ``name`` is up.

    Raises ``RuntimeError`` with the tail of its ``log`` when the process exits first, and
    when ``timeout`` seconds pass; the caller stops the process then.
    """
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited at start:\n{log.read_text()[-2000:]}")
        try:
            if ready():
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name} did not start in time")
        time.sleep(0.05)


class ProductProcess:
    """A product server run as a child in its own session, its output kept in a log.

    A subclass names itself and its log (``name``, ``log_name``), says when it is
    ``ready()`` and calls ``launch`` from ``__enter__`` (on ``self.port``); stopping
    (SIGTERM, then SIGKILL) and the start-up wait are here.
    """

    name = "the server"
    log_name = "server.log"
    start_timeout = 60.0

    def __init__(self, workdir: Path) -> None:
        self.log_path = workdir / self.log_name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    def launch(self, command: list[str], **popen: Any) -> None:
        """Start ``command`` (output to the log) and wait until ``ready()``; stop it if not."""
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **popen
            )
        try:
            await_start(self._process, self.ready, self.name, self.log_path, self.start_timeout)
        except RuntimeError:
            self.stop()
            raise

    def ready(self) -> bool:
        """Tell whether the server answers (an ``OSError`` counts as not yet)."""
        raise NotImplementedError

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL) and wait for it."""
        process, self._process = self._process, None
        stop_group(process)


def serve_in_thread(server: Any, poll_interval: float = 0.01) -> Iterator[str]:
    """Run a ``socketserver`` server on a daemon thread; yield its URL; shut it down after.

    ``yield from`` it in a fixture. The short poll interval makes ``shutdown`` return
    in milliseconds instead of the default half second.
    """
    thread = threading.Thread(target=server.serve_forever, args=(poll_interval,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def python_prints(code: str) -> str:
    """Run ``code`` in a fresh interpreter (it must succeed); return what it printed, stripped.

    For the "importing the battery imports no SDK" tests: only a new process has a
    ``sys.modules`` that this test session's imports have not filled.
    """
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return ran.stdout.strip()
