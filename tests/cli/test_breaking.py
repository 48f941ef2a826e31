"""``toolkit breaking old -- new``: changes listed, exit 4 on breaking ones."""

from __future__ import annotations

from pathlib import Path

import pytest

OLD = """entity User {
  id: uuid @primary
  name: string
  bio: string?
}

service UserService {
  rpc GetUser(id: uuid) -> User {
    http: GET "/v1/users/{id}"
    auth: required
  }
}
"""
NEW_BREAKING = OLD.replace("  name: string\n", "").replace("bio: string?", "bio: string")
NEW_COMPATIBLE = OLD.replace("  bio: string?\n", "  bio: string?\n  email: string?\n")


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``old/``, ``breaking/``, ``compatible/`` (nested) schema trees and a broken one."""
    root = tmp_path_factory.mktemp("breaking")
    for name, text in (
        ("old", OLD),
        ("breaking", NEW_BREAKING),
        ("compatible", NEW_COMPATIBLE),
        ("bad", "entity {"),
    ):
        (root / name).mkdir(parents=True)
        (root / name / "app.toolkit").write_text(text)
    return root


def test_breaking_changes_exit_4(toolkit, work: Path) -> None:
    ran = toolkit("breaking", "old", "--", "breaking", cwd=work)
    assert ran.returncode == 4, ran
    assert ran.stdout.splitlines() == [
        "✘ field User.name removed (field_removed)",
        "✘ field User.bio changed from optional to required (field_optionality_changed)",
    ]
    assert "toolkit breaking: 2 breaking change(s) found" in ran.stderr


def test_breaking_json(toolkit, work: Path) -> None:
    ran = toolkit("breaking", "--json", "old/app.toolkit", "--", "breaking/app.toolkit", cwd=work)
    assert ran.returncode == 4
    env = ran.json
    assert env["ok"] is False and env["exitCode"] == 4
    assert env["data"]["breaking"] == 2
    first = env["data"]["changes"][0]
    assert (first["kind"], first["breaking"], first["message"]) == (
        "field_removed",
        True,
        "field User.name removed",
    )


def test_informational_only(toolkit, work: Path) -> None:
    ran = toolkit("breaking", "old", "--", "compatible", cwd=work)
    assert ran.returncode == 0, ran
    assert ran.stdout.splitlines() == [
        "  field User.email added (field_added)",
        "no breaking changes (1 informational)",
    ]
    env = toolkit("--json", "breaking", "old", "--", "compatible", cwd=work).json
    assert env["ok"] is True
    assert env["data"]["breaking"] == 0
    assert env["data"]["changes"] == [
        {
            "kind": "field_added",
            "breaking": False,
            "message": "field User.email added",
            "file": "compatible/app.toolkit",
            "line": 5,
        }
    ]


def test_no_differences(toolkit, work: Path) -> None:
    ran = toolkit("breaking", "old", "--", "old/app.toolkit", cwd=work)
    assert ran.returncode == 0 and ran.stdout == "no differences found\n"


def test_missing_separator_is_usage_error(toolkit, work: Path) -> None:
    ran = toolkit("breaking", "old", "breaking", cwd=work)
    assert ran.returncode == 2
    assert "missing the `--`" in ran.stderr
    env = toolkit("--json", "breaking", "old", "--", cwd=work).json
    assert env["exitCode"] == 2 and "no new schema given" in env["error"]


def test_broken_side_exit_3(toolkit, work: Path) -> None:
    ran = toolkit("breaking", "old", "--", "bad", cwd=work)
    assert ran.returncode == 3
    assert "bad/app.toolkit:1:" in ran.stderr and "[parse]" in ran.stderr
    assert "1 file(s) failed to compile" in ran.stderr


def test_help(toolkit) -> None:
    ran = toolkit("breaking", "--help")
    assert ran.returncode == 0 and "OLD [OLD ...] -- NEW [NEW ...]" in ran.stdout


def test_a_named_enum_losing_a_value_breaks_through_the_command(toolkit, tmp_path: Path) -> None:
    """The issue's case: ``enum(a, b)`` -> ``enum(a)`` was reported inline, not on a named enum."""
    named = OLD.replace("  bio: string?\n", "  bio: string?\n  tier: Tier\n")
    named += "\nenum Tier { free, pro }\n"
    for name, text in (("old", named), ("new", named.replace("free, pro", "free"))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "app.toolkit").write_text(text)
    ran = toolkit("breaking", "old", "--", "new", cwd=tmp_path)
    assert ran.returncode == 4, ran
    assert ran.stdout.splitlines() == ["✘ enum Tier: value pro removed (enum_value_removed)"]
    back = toolkit("--json", "breaking", "new", "--", "old", cwd=tmp_path).json
    assert back["exitCode"] == 4
    assert [(c["kind"], c["breaking"]) for c in back["data"]["changes"]] == [
        ("enum_value_added", True)
    ]


def test_an_inline_enum_gaining_a_value_breaks_through_the_command(toolkit, tmp_path: Path) -> None:
    """The same rule as the named enum: ``enum(free, pro)`` -> ``enum(free, pro, team)``."""
    inline = OLD.replace("  bio: string?\n", "  bio: string?\n  tier: enum(free, pro)\n")
    for name, text in (("old", inline), ("new", inline.replace("free, pro", "free, pro, team"))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "app.toolkit").write_text(text)
    ran = toolkit("breaking", "old", "--", "new", cwd=tmp_path)
    assert ran.returncode == 4, ran
    assert (
        ran.stdout.splitlines()[0] == "✘ field User.tier: enum value team added (enum_value_added)"
    )
    back = toolkit("--json", "breaking", "new", "--", "old", cwd=tmp_path).json
    assert [(c["kind"], c["breaking"]) for c in back["data"]["changes"]] == [
        ("field_type_changed", True)
    ]


def test_the_command_page_lists_every_kind_in_its_table() -> None:
    """docs/cli/breaking.md's kinds table names each kind, on the side it is reported on."""
    from toolkit_codegen.breaking import BREAKING_KINDS, INFO_KINDS

    page = (Path(__file__).parents[2] / "docs" / "cli" / "breaking.md").read_text()
    row = next(line for line in page.splitlines() if line.startswith("| `module_removed`"))
    breaking, info = row.split(" | ")[:2]
    assert [k for k in BREAKING_KINDS if f"`{k}`" not in breaking] == []
    assert [k for k in INFO_KINDS if f"`{k}`" not in info] == []
