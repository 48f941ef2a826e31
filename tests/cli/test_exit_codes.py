"""One test per exit code of the CLI contract, each through a real command, text and --json.

0 success, 1 runtime error, 2 usage error, 3 invalid input, 4 check failed, 5 a required
service is unreachable (DESIGN.md, "CLI contract").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import run_toolkit

VALID = """\
entity Note {
  id: uuid @primary
  title: string
}
"""
UNFORMATTED = "entity   Note {\n  id: uuid @primary\n     title: string\n}\n"
INVALID = "entity Note {\n  id: uuid @primary\n  title: strng\n}\n"


@pytest.fixture
def schemas(tmp_path: Path) -> Path:
    for name, text in (("valid", VALID), ("unformatted", UNFORMATTED), ("invalid", INVALID)):
        (tmp_path / f"{name}.toolkit").write_text(text)
    return tmp_path


def _both(*args: str, cwd: Path) -> tuple[int, int, dict]:
    text = run_toolkit(*args, cwd=cwd)
    js = run_toolkit(*args, "--json", cwd=cwd)
    return text.returncode, js.returncode, js.json


def test_exit_0_success(schemas: Path) -> None:
    text, js, body = _both("check", "valid.toolkit", cwd=schemas)
    assert (text, js, body["exitCode"], body["ok"]) == (0, 0, 0, True)


def test_exit_1_runtime_error_outside_a_project(tmp_path: Path) -> None:
    text, js, body = _both("serve", cwd=tmp_path)
    assert (text, js, body["exitCode"], body["ok"]) == (1, 1, 1, False)
    assert "not inside a project" in body["error"]
    assert "toolkit new" in body["hint"]


def test_exit_2_usage_error(schemas: Path) -> None:
    text, js, body = _both("check", "--no-such-flag", "valid.toolkit", cwd=schemas)
    assert (text, js, body["exitCode"]) == (2, 2, 2)
    assert "--no-such-flag" in body["error"]


def test_exit_3_invalid_schema(schemas: Path) -> None:
    ran = run_toolkit("check", "invalid.toolkit", cwd=schemas)
    assert ran.returncode == 3
    assert "invalid.toolkit:3:" in ran.stderr
    body = run_toolkit("check", "invalid.toolkit", "--json", cwd=schemas).json
    assert (body["exitCode"], body["ok"]) == (3, False)


def test_exit_4_check_failed(schemas: Path) -> None:
    text, js, body = _both("fmt", "-l", "unformatted.toolkit", cwd=schemas)
    assert (text, js, body["exitCode"]) == (4, 4, 4)
    assert "unformatted.toolkit" in str(body)
    assert (schemas / "unformatted.toolkit").read_text() == UNFORMATTED


def test_exit_5_unreachable_service_and_the_password_stays_hidden(schemas: Path) -> None:
    dsn = "postgres://app:s3cret-pw@127.0.0.1:1/nowhere"
    args = ("db", "migrate", "--adapter", "sqlserver", "--dsn", dsn, "valid.toolkit")
    text = run_toolkit(*args, cwd=schemas)
    js = run_toolkit(*args, "--json", cwd=schemas)
    assert (text.returncode, js.returncode, js.json["exitCode"]) == (5, 5, 5)
    for output in (text.stdout, text.stderr, js.stdout, js.stderr):
        assert "s3cret-pw" not in output
    assert "127.0.0.1:1" in text.stderr
