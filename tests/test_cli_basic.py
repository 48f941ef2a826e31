"""The ``toolkit`` console script: version, help, and the exit codes of the CLI contract.

Most tests run the installed script as a subprocess, exactly as a user or CI calls it;
a missing script fails (run ``make venv``), it is never skipped.
"""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from toolkit_batteries import __version__
from toolkit_batteries.cli import EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, main
from toolkit_batteries.cli.table import COMMANDS

SCRIPT = Path(sys.executable).parent / "toolkit"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the installed ``toolkit`` script with ``args`` and no standard input."""
    if not SCRIPT.exists():
        pytest.fail(f"{SCRIPT} is missing: the project is not installed (run `make venv`)")
    return subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
        check=False,
    )


def test_version_prints_name_and_release() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout == "toolkit 0.8.0\n"
    assert result.stderr == ""


def test_version_agrees_with_installed_metadata() -> None:
    assert __version__ == metadata.version("django-toolkit") == "0.8.0"


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_usage_on_stdout(flag: str) -> None:
    result = run(flag)
    assert result.returncode == 0
    assert result.stdout.startswith("usage: toolkit ")
    for info in COMMANDS:
        assert f"  {info.name} " in result.stdout, info.name
    assert "--version" in result.stdout
    assert result.stderr == ""


def test_bare_toolkit_prints_usage_to_stderr_and_exits_1() -> None:
    result = run()
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("usage: toolkit ")


@pytest.mark.parametrize("arg", ["frobnicate", "--frobnicate"])
def test_unknown_command_or_flag_is_a_usage_error(arg: str) -> None:
    result = run(arg)
    assert result.returncode == 2
    assert result.stdout == ""
    assert arg in result.stderr
    assert "toolkit --help" in result.stderr


def test_module_entry_point_matches_script() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "toolkit_batteries.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, "toolkit 0.8.0\n")


def test_main_returns_exit_codes_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == EXIT_OK == 0
    assert capsys.readouterr().out == "toolkit 0.8.0\n"
    assert main([]) == EXIT_RUNTIME == 1
    assert capsys.readouterr().err.startswith("usage: toolkit ")
    assert main(["nope"]) == EXIT_USAGE == 2
    assert "'nope'" in capsys.readouterr().err
