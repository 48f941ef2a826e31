"""``toolkit docs``: reference pages per command, and the skill file kept equal to the repo's."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import REPO, run_toolkit, tree
from toolkit_batteries.cli.table import COMMANDS

SKILL = REPO / "skills" / "toolkit" / "SKILL.md"


def test_docs_dir_writes_an_index_and_a_page_per_command(tmp_path: Path) -> None:
    ran = run_toolkit("docs", "--dir", str(tmp_path))
    assert ran.returncode == 0, ran
    pages = {p.name: p.read_text() for p in tmp_path.iterdir()}
    assert len(pages) == len(COMMANDS) + 1
    for info in COMMANDS:
        page = pages["toolkit-" + info.name.replace(":", "-") + ".md"]
        assert page.startswith(f"# `toolkit {info.name}`")
        assert info.short in page
        assert f"({'toolkit-' + info.name.replace(':', '-')}.md)" in pages["toolkit.md"]
    assert "`--dry-run`" in pages["toolkit-docs.md"]
    assert "## `toolkit db migrate`" in pages["toolkit-db.md"]


def test_docs_dry_run_writes_nothing(tmp_path: Path) -> None:
    before = tree(tmp_path)
    ran = run_toolkit("docs", "--dir", str(tmp_path / "ref"), "--dry-run")
    assert ran.returncode == 0, ran
    assert "dry run: would write" in ran.stdout
    assert tree(tmp_path) == before


def test_skill_file_in_the_repository_equals_the_rendered_one() -> None:
    ran = run_toolkit("docs", "--skill")
    assert ran.returncode == 0, ran
    assert SKILL.read_text(encoding="utf-8") == ran.stdout, (
        "skills/toolkit/SKILL.md is stale: run `toolkit docs --skill --dir skills/toolkit`"
    )
    for info in COMMANDS:
        assert f"- `toolkit {info.name}`: {info.short}" in ran.stdout
    assert ran.stdout.startswith("---\nname: toolkit\n")


def test_skill_with_dir_writes_skill_md(tmp_path: Path) -> None:
    ran = run_toolkit("docs", "--skill", "--dir", str(tmp_path), "--json")
    assert ran.returncode == 0, ran
    assert ran.json["data"]["files"] == [str(tmp_path / "SKILL.md")]
    assert (tmp_path / "SKILL.md").read_text() == SKILL.read_text()
