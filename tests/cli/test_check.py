"""``toolkit check``: validate schema files, exit 0 / 2 / 3, data for --json."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import REPO

SCHEMAS = REPO / "tests" / "codegen" / "schemas"
BROKEN = """entity User {
  id: uuid @primary
  name: strng
}
"""


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``multi/`` (a valid two-module schema), ``proj/schema/`` and ``bad/schema/``."""
    root = tmp_path_factory.mktemp("check")
    shutil.copytree(SCHEMAS / "multi_service", root / "multi")
    shutil.copytree(SCHEMAS / "multi_service", root / "proj" / "schema")
    (root / "bad" / "schema").mkdir(parents=True)
    (root / "bad" / "schema" / "app.toolkit").write_text(BROKEN)
    (root / "empty").mkdir()
    return root


def test_valid_text(toolkit, work: Path) -> None:
    ran = toolkit("check", "multi", cwd=work)
    assert ran.returncode == 0, ran
    assert ran.stdout == "✔ 2 file(s) valid\n"
    assert "discovered" not in ran.stderr  # explicit paths are not "discovered"


def test_valid_json_data(toolkit, work: Path) -> None:
    ran = toolkit("--json", "check", "multi", cwd=work)
    assert ran.returncode == 0, ran
    env = ran.json
    assert env["ok"] is True and env["command"] == "check" and env["exitCode"] == 0
    data = env["data"]
    assert data["valid"] is True
    assert (data["files"], data["entities"], data["services"], data["rpcs"]) == (2, 3, 4, 7)
    assert env["breadcrumbs"] == ["toolkit compile", "toolkit fmt"]


def test_discovers_schema_dir(toolkit, work: Path) -> None:
    ran = toolkit("check", cwd=work / "proj")
    assert ran.returncode == 0, ran
    assert "discovered 2 file(s) under schema/" in ran.stderr
    assert "✔ 2 file(s) valid" in ran.stdout


def test_no_input_is_a_usage_error(toolkit, work: Path) -> None:
    ran = toolkit("check", cwd=work / "empty")
    assert ran.returncode == 2, ran
    assert "toolkit check: no input .toolkit files given" in ran.stderr
    env = toolkit("check", "--json", cwd=work / "empty").json
    assert env["exitCode"] == 2 and "no input .toolkit files" in env["error"]


def test_diagnostics_exit_3(toolkit, work: Path) -> None:
    ran = toolkit("check", cwd=work / "bad")
    assert ran.returncode == 3, ran
    assert 'schema/app.toolkit:3:9: [resolve] unknown type strng (did you mean "string"?)' in (
        ran.stderr
    )
    assert "toolkit check: 1 file(s) failed to compile" in ran.stderr
    assert ran.stdout == ""


def test_diagnostics_in_json(toolkit, work: Path) -> None:
    ran = toolkit("--json", "check", "schema", cwd=work / "bad")
    assert ran.returncode == 3
    env = ran.json
    assert env["ok"] is False and env["error"] == "toolkit check: 1 file(s) failed to compile"
    (diag,) = env["data"]["diagnostics"]
    assert diag == {
        "file": "schema/app.toolkit",
        "line": 3,
        "column": 9,
        "severity": "error",
        "phase": "resolve",
        "message": 'unknown type strng (did you mean "string"?)',
    }
    assert "[resolve]" in ran.stderr  # diagnostics still go to stderr


#: Job names and parameters that are valid schema names but not usable Python names there.
JOBS_PYTHON_CANNOT_TAKE = """job Import(user: string) { queue: mail }
job Send(from: string) { queue: mail }
job SEND(_check: string) { queue: mail }
"""


def test_job_names_python_cannot_take_fail_check_not_compile(toolkit, tmp_path: Path) -> None:
    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "jobs.toolkit").write_text(JOBS_PYTHON_CANNOT_TAKE)
    ran = toolkit("check", "schema", cwd=tmp_path)
    assert ran.returncode == 3, ran
    shown = ran.stderr.splitlines()
    for line in (
        'schema/jobs.toolkit:1:1: [resolve] job Import becomes the Python function "import", '
        "a keyword; choose another name",
        'schema/jobs.toolkit:2:10: [resolve] parameter "from" of job Send is a Python keyword; '
        "rename it",
        "schema/jobs.toolkit:3:1: [resolve] job SEND and job Send both become the Python function "
        '"send"; rename one',
        'schema/jobs.toolkit:3:10: [resolve] parameter "_check" of job SEND is a name the '
        "generated dispatcher uses; rename it",
    ):
        assert line in shown, ran.stderr
    assert "compiler bug" not in ran.stderr
    out = tmp_path / "out"
    compiled = toolkit("compile", "--backend", "jobs", "--out", str(out), "schema", cwd=tmp_path)
    assert compiled.returncode == 3, compiled
    assert "compiler bug" not in compiled.stderr  # refused as a schema error, not a crash
    assert not out.exists()


def test_text_diagnostics_show_bidi_overrides_escaped(toolkit, tmp_path: Path) -> None:
    # U+202E reverses what follows on screen: "evil\u202eloot.toolkit" would read as
    # "eviltikloot.tool..." in a reviewer's terminal.
    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "evil\u202eloot.toolkit").write_text("entity {\n")
    ran = toolkit("check", "schema", cwd=tmp_path)
    assert ran.returncode == 3, ran
    assert "\u202e" not in ran.stderr
    assert "schema/evil\\u202eloot.toolkit:1:" in ran.stderr, ran.stderr
    as_json = toolkit("--json", "check", "schema", cwd=tmp_path).json
    assert as_json["data"]["diagnostics"][0]["file"] == "schema/evil\u202eloot.toolkit"


def test_missing_file_exit_3(toolkit, work: Path) -> None:
    ran = toolkit("check", "nope.toolkit", cwd=work)
    assert ran.returncode == 3
    assert "nope.toolkit:1:1: [load] no such file or directory" in ran.stderr


def test_help(toolkit) -> None:
    ran = toolkit("check", "--help")
    assert ran.returncode == 0 and "usage: toolkit check" in ran.stdout
