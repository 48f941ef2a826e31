"""Shared fixtures for the CLI tests: run the installed ``toolkit`` script for real.

``toolkit(*args, cwd=..., env=...)`` runs the console script as a subprocess with no
standard input and returns the completed process; ``.json`` parses the single envelope
line of a ``--json`` run. ``tree(path)`` snapshots a directory (relative path -> bytes)
so dry-run tests can compare before and after.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management.utils import get_random_secret_key

from tests.test_template import render

SCRIPT = Path(sys.executable).parent / "toolkit"
REPO = Path(__file__).resolve().parents[2]
#: ``toolkit generate``'s subcommands in the order help, the catalog and completion list them.
GENERATE = [
    "module",
    "entity",
    "job",
    "schedule",
    "server",
    "worker",
    "deploy",
    "seed",
    "tinker",
    "adapter",
]
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


def start_serve(
    project: Path, env: dict[str, str], port: int, stdout: int = subprocess.PIPE
) -> subprocess.Popen[str]:
    """Start ``toolkit serve`` for ``project`` on ``127.0.0.1:port`` in the background.

    The caller waits for it to answer and stops it (SIGTERM) in a ``finally``.
    """
    return subprocess.Popen(
        [str(SCRIPT), "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Render one project per test module (a module may override it to add files)."""
    return render_project(tmp_path_factory.mktemp("rendered") / "demo")


@pytest.fixture
def proj(rendered: Path, tmp_path: Path) -> Path:
    """Return a fresh copy of the module's rendered project for one test to change."""
    return Path(shutil.copytree(rendered, tmp_path / "demo"))


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


#: One real render per project name and session, copied for each test (see render_project).
_RENDERED: dict[str, Path] = {}


def render_project(target: Path, name: str = "demo") -> Path:
    """Render ``project_template`` into ``target`` as ``django-admin startproject`` does.

    Used by tests of commands that run inside a project; the ``new`` command's own tests
    render through ``toolkit new`` instead. The first call per ``name`` runs the real
    ``startproject`` into a session directory; later calls copy that tree (a subprocess
    saved per test) and give the copy a secret key of its own, as a render would.
    """
    rendered = _RENDERED.get(name)
    if rendered is None:
        rendered = render(Path(tempfile.mkdtemp(prefix="toolkit-render-")) / name, name)
        atexit.register(shutil.rmtree, rendered.parent, ignore_errors=True)
        _RENDERED[name] = rendered
    shutil.copytree(rendered, target, dirs_exist_ok=True)
    settings = target / name / "settings.py"
    key = _rendered_secret_key(rendered / name / "settings.py")
    settings.write_text(settings.read_text().replace(key, get_random_secret_key(), 1))
    return target


def _rendered_secret_key(settings: Path) -> str:
    """Return the SECRET_KEY literal ``startproject`` wrote into ``settings``."""
    found = re.search(r'^\s*SECRET_KEY = "([^"]+)"', settings.read_text(), re.M)
    assert found, f"no rendered SECRET_KEY in {settings}"
    return found.group(1)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Render a fresh project (package ``demo``) in its own temporary directory."""
    return render_project(tmp_path / "demo")
