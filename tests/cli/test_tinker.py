"""``toolkit tinker``: Django's shell with the container, run with -c (it never prompts)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Ran, base_env, render_project

WARNING = (
    "WARNING: toolkit tinker is development-only: it evaluates arbitrary Python against a "
    "live container, so run it against a development database only."
)
CODE = "print(GREETING, type(services.cache()).__name__, User.__name__, settings.TIME_ZONE)"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Render a project whose tinker.py defines a name the tests print."""
    root = render_project(tmp_path_factory.mktemp("tinker") / "demo")
    (root / "tinker.py").write_text('GREETING = "hello from tinker.py"\n', encoding="utf-8")
    return root


def test_c_runs_code_with_services_models_settings_and_tinker_py(
    toolkit: Callable[..., Ran], project: Path
) -> None:
    ran = toolkit("tinker", "-c", CODE, cwd=project)
    assert ran.returncode == 0, ran
    assert ran.stdout == "hello from tinker.py MemoryCache User UTC\n"
    assert WARNING in ran.stderr


def test_json_mode_carries_the_printed_output(toolkit: Callable[..., Ran], project: Path) -> None:
    ran = toolkit("--json", "tinker", "-c", "print(container.closed, 6 * 7)", cwd=project)
    assert ran.returncode == 0, ran
    assert ran.json == {
        "ok": True,
        "command": "tinker",
        "exitCode": 0,
        "data": {"stdout": "False 42\n"},
    }
    assert WARNING in ran.stderr


def test_no_startup_skips_tinker_py_and_an_error_exits_1(
    toolkit: Callable[..., Ran], project: Path
) -> None:
    ran = toolkit("tinker", "--no-startup", "-c", "print(GREETING)", cwd=project)
    assert ran.returncode == 1, ran
    assert "NameError" in ran.stderr and "toolkit tinker: the code raised NameError" in ran.stderr
    assert WARNING in ran.stderr and ran.stdout == ""
    ran = toolkit("--json", "tinker", "-c", "1/0", cwd=project)
    assert ran.returncode == 1 and ran.json["exitCode"] == 1
    assert "ZeroDivisionError" in ran.json["error"]


def test_without_c_and_no_terminal_it_reads_stdin_and_exits(
    toolkit: Callable[..., Ran], project: Path
) -> None:
    ran = toolkit("tinker", cwd=project)  # stdin is /dev/null: nothing to run, no prompt
    assert ran.returncode == 0, ran
    assert ran.stdout == "" and WARNING in ran.stderr


def test_manage_py_tinker_runs_code_from_stdin(project: Path) -> None:
    ran = subprocess.run(
        [sys.executable, "manage.py", "tinker"],
        cwd=project,
        env=base_env(),
        input="print(GREETING.upper())\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "HELLO FROM TINKER.PY\n" and WARNING in ran.stderr


def test_outside_a_project_and_bad_flags(toolkit: Callable[..., Ran], tmp_path: Path) -> None:
    ran = toolkit("tinker", "-c", "print(1)", cwd=tmp_path)
    assert ran.returncode == 1
    assert "not inside a project" in ran.stderr and "hint:" in ran.stderr
    ran = toolkit("tinker", "--interface", "emacs", cwd=tmp_path)
    assert ran.returncode == 2 and "invalid choice" in ran.stderr


def test_help_lists_the_flags(toolkit: Callable[..., Ran]) -> None:
    ran = toolkit("tinker", "--help")
    assert ran.returncode == 0
    for flag in ("--command", "--no-startup", "--no-imports", "--interface", "development"):
        assert flag in ran.stdout
