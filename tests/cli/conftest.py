"""Shared fixtures for the CLI tests: run the installed ``toolkit`` script for real.

``toolkit(*args, cwd=..., env=...)`` runs the console script as a subprocess with no
standard input and returns the completed process; ``.json`` parses the single envelope
line of a ``--json`` run. ``tree(path)`` snapshots a directory (relative path -> bytes)
so dry-run tests can compare before and after.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(sys.executable).parent / "toolkit"
REPO = Path(__file__).resolve().parents[2]
#: The production SECRET_KEY every run gets (``base_env(DJANGO_SECRET_KEY="")`` unsets it).
TEST_SECRET_KEY = "cli-test-key-" + "Vb3xR" * 10


class Ran:
    """A finished ``toolkit`` run."""

    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        self.proc = proc
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    @property
    def json(self) -> dict[str, Any]:
        """The envelope: stdout must be exactly one JSON line."""
        lines = self.stdout.splitlines()
        assert len(lines) == 1, f"expected one envelope line, got {self.stdout!r}"
        return json.loads(lines[0])

    def __repr__(self) -> str:
        return f"Ran(rc={self.returncode}, stdout={self.stdout!r}, stderr={self.stderr!r})"


def base_env(**extra: str) -> dict[str, str]:
    """Return the environment for a run: this one minus Django/toolkit switches, plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "DJANGO_SETTINGS_MODULE" and not k.startswith("TOOLKIT_")
    }
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # A rendered project is production unless TOOLKIT_ENV says otherwise, and production
    # settings refuse to load without a key of their own.
    env["DJANGO_SECRET_KEY"] = TEST_SECRET_KEY
    env.update(extra)
    return env


def run_toolkit(
    *args: str,
    cwd: Path | str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Ran:
    """Run ``toolkit args...`` and return what happened."""
    if not SCRIPT.exists():
        pytest.fail(f"{SCRIPT} is missing: the project is not installed (run `make venv`)")
    proc = subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=str(cwd) if cwd is not None else None,
        env=env if env is not None else base_env(),
        timeout=timeout,
        check=False,
    )
    return Ran(proc)


@pytest.fixture
def toolkit() -> Callable[..., Ran]:
    """Provide the ``run_toolkit`` function as a fixture."""
    return run_toolkit


def tree(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` (relative posix path -> content); directories as b'<dir>'."""
    out: dict[str, bytes] = {}
    for item in sorted(path.rglob("*")):
        rel = item.relative_to(path).as_posix()
        out[rel] = b"<dir>" if item.is_dir() else item.read_bytes()
    return out


def render_project(target: Path, name: str = "demo") -> Path:
    """Render ``project_template`` into ``target`` with ``django-admin startproject``.

    Used by tests of commands that run inside a project; the ``new`` command's own tests
    render through ``toolkit new`` instead.
    """
    target.mkdir(parents=True, exist_ok=True)
    admin = Path(sys.executable).parent / "django-admin"
    subprocess.run(
        [
            str(admin),
            "startproject",
            f"--template={REPO / 'project_template'}",
            "--extension=py,toolkit,md",
            name,
            str(target),
        ],
        check=True,
        capture_output=True,
        text=True,
        env=base_env(),
    )
    return target


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Render a fresh project (package ``demo``) in its own temporary directory."""
    return render_project(tmp_path / "demo")
