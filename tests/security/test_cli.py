"""Issue 12 defect 10: ``toolkit new --force`` and ``extract --force`` never write through
a symbolic link.

``--force`` writes into a directory that already holds files, which someone else may have
prepared: on the landed code a link planted at ``manage.py`` (or at a directory such as
``api``) made the copy overwrite whatever it pointed to. Now the target is checked first
and a link anywhere on a path is refused with nothing written.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import render_project, run_toolkit, tree

MODULE = """\
entity Invoice {
  id: uuid @primary
  number: string @validate(max_len: 40)
}
"""


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """Return a file outside the target, for a planted link to point at."""
    path = tmp_path / "outside" / "victim.txt"
    path.parent.mkdir()
    path.write_text("precious\n")
    return path


def _assert_refused(ran, target: Path, before: dict[str, bytes], link: str) -> None:
    assert ran.returncode == 1, ran
    assert f"{link} is a symbolic link" in ran.stderr
    assert "nothing was written" in ran.stderr
    assert tree(target) == before  # not one file of the project was written either


@pytest.mark.parametrize("link", ["manage.py", "api"])
def test_new_force_refuses_to_write_through_a_symlink(
    tmp_path: Path, victim: Path, link: str
) -> None:
    target = tmp_path / "proj"
    target.mkdir()
    (target / "notes.txt").write_text("mine\n")
    pointed = victim if link == "manage.py" else victim.parent
    (target / link).symlink_to(pointed)
    before = tree(target)

    ran = run_toolkit("new", "proj", "--dir", str(target), "--force")
    _assert_refused(ran, target, before, link)
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in victim.parent.iterdir()) == ["victim.txt"]

    # Without the link the same command writes the project (and keeps the user's file).
    (target / link).unlink()
    ran = run_toolkit("new", "proj", "--dir", str(target), "--force")
    assert ran.returncode == 0, ran
    assert (target / "manage.py").is_file() and not (target / "manage.py").is_symlink()
    assert (target / "notes.txt").read_text() == "mine\n"


def test_extract_force_refuses_to_write_through_a_symlink(tmp_path: Path, victim: Path) -> None:
    project = render_project(tmp_path / "demo")
    (project / "schema" / "billing").mkdir()
    (project / "schema" / "billing" / "invoices.toolkit").write_text(MODULE)
    out = tmp_path / "billing-service"
    out.mkdir()
    (out / "schema").mkdir()
    (out / "schema" / "billing").symlink_to(victim.parent, target_is_directory=True)
    before = tree(out)

    ran = run_toolkit("extract", "billing", "--out", str(out), "--force", cwd=project)
    _assert_refused(ran, out, before, "schema/billing")
    assert sorted(p.name for p in victim.parent.iterdir()) == ["victim.txt"]

    (out / "schema" / "billing").unlink()
    ran = run_toolkit("extract", "billing", "--out", str(out), "--force", cwd=project)
    assert ran.returncode == 0, ran
    assert (out / "schema" / "billing" / "invoices.toolkit").read_text() == MODULE
    shutil.rmtree(out)
