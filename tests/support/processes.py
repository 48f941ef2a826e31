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
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


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
