"""``toolkit fmt``: list (exit 4), write in place (idempotent), refuse syntax errors (3)."""

from __future__ import annotations

from pathlib import Path

UGLY = "entity   User {\n    id: uuid   @primary\n\n\n  name: string }\n"
PRETTY = "entity User {\n  id: uuid @primary\n\n  name: string\n}\n"


def _project(root: Path) -> Path:
    (root / "schema" / "billing").mkdir(parents=True)
    (root / "schema" / "app.toolkit").write_text(UGLY)
    (root / "schema" / "billing" / "b.toolkit").write_text(PRETTY.replace("User", "Invoice"))
    return root


def test_list_exit_4_and_json(toolkit, tmp_path: Path) -> None:
    root = _project(tmp_path)
    ran = toolkit("fmt", cwd=root)
    assert ran.returncode == 4, ran
    assert ran.stdout == "schema/app.toolkit\n"
    assert "toolkit fmt: 1 file(s) would be reformatted" in ran.stderr
    env = toolkit("--json", "fmt", "-l", cwd=root).json
    assert env["exitCode"] == 4
    assert env["data"] == {"changed": ["schema/app.toolkit"], "checked": 2}
    assert (root / "schema" / "app.toolkit").read_text() == UGLY  # listing writes nothing


def test_write_then_idempotent(toolkit, tmp_path: Path) -> None:
    root = _project(tmp_path)
    target = root / "schema" / "app.toolkit"
    target.chmod(0o640)
    ran = toolkit("fmt", "-w", cwd=root)
    assert ran.returncode == 0, ran
    assert ran.stdout == "✔ schema/app.toolkit\n"
    assert target.read_text() == PRETTY
    assert target.stat().st_mode & 0o777 == 0o640  # permissions kept
    again = toolkit("--json", "fmt", "--write", "schema", cwd=root)
    assert again.returncode == 0
    assert again.json["data"] == {"changed": [], "checked": 2}
    assert target.read_text() == PRETTY
    text = toolkit("fmt", "-w", cwd=root)
    assert text.stdout == "already formatted\n"
    listed = toolkit("fmt", "-l", cwd=root)
    assert listed.returncode == 0 and listed.stdout == "✔ 2 file(s) already formatted\n"


def test_syntax_error_exit_3_writes_nothing(toolkit, tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "schema" / "broken.toolkit").write_text("entity {\n")
    ran = toolkit("fmt", "-w", cwd=root)
    assert ran.returncode == 3
    assert (
        'toolkit fmt: "schema/broken.toolkit" has syntax errors, run '
        "'toolkit check schema/broken.toolkit' for details"
    ) in ran.stderr
    assert (root / "schema" / "app.toolkit").read_text() == UGLY  # no partial rewrite


def test_list_and_write_conflict(toolkit, tmp_path: Path) -> None:
    ran = toolkit("fmt", "-l", "-w", cwd=_project(tmp_path))
    assert ran.returncode == 2 and "not allowed with" in ran.stderr


def test_no_files_usage_error(toolkit, tmp_path: Path) -> None:
    ran = toolkit("--json", "fmt", cwd=tmp_path)
    assert ran.returncode == 2
    assert "no input .toolkit files given" in ran.json["error"]
