"""Find and stop the product servers the tests start (OpenBao, localstripe, oidc-provider) cleanly.

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
    """Poll ``condition`` every 50 ms until it holds or ``timeout`` s pass; return whether."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())
