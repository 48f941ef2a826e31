"""Run Python in a child process the way the project-level tests do: one helper, one shape.

Rendered projects, scripts without settings and ``manage.py`` checks each need a fresh
interpreter (Django is configured once per process); this runs the code, fails the test
with the child's stderr when it exits non-zero, and hands back its stdout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def run_python(
    code: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    args: Sequence[str] = (),
    timeout: float = 120,
) -> str:
    """Run ``python -c code *args`` in ``cwd``; assert it succeeded and return its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dict(env),
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def run_python_json(code: str, *, cwd: Path, env: Mapping[str, str], **kwargs: Any) -> Any:
    """Run ``code`` as :func:`run_python` does; parse its last stdout line as JSON."""
    return json.loads(run_python(code, cwd=cwd, env=env, **kwargs).strip().splitlines()[-1])


def run_manage(
    project: Path, *args: str, env: Mapping[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``python manage.py args...`` in ``project`` and return the finished process.

    Unlike :func:`run_python` it does not assert success: tests check the exit code.
    """
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env=dict(env),
        timeout=timeout,
        check=False,
    )
