"""``toolkit add <battery with tables>`` names the migration next, or runs it with --migrate.

Before, ``add search`` ended with "next: toolkit compile && toolkit doctor", and that
doctor failed on the missing table.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from tests.cli.conftest import base_env, render_project, run_toolkit


def _env() -> dict[str, str]:
    return base_env(AUTH__DEFAULT__JWT_SECRET=secrets.token_urlsafe(48), WEB_CONCURRENCY="1")


def test_add_a_battery_with_tables_names_the_migration(tmp_path: Path) -> None:
    project = render_project(tmp_path / "p")
    env = _env()
    assert run_toolkit("db", "migrate", cwd=project, env=env).returncode == 0
    added = run_toolkit("add", "search", cwd=project, env=env)
    assert added.returncode == 0, added
    last = added.stdout.splitlines()[-1]
    assert last == "next: toolkit db migrate (creates the search tables) && toolkit doctor"
    before = run_toolkit("doctor", "--strict", "--service", "search", cwd=project, env=env)
    assert before.returncode == 4 and "toolkit_search_document" in before.stdout
    assert run_toolkit("db", "migrate", cwd=project, env=env).returncode == 0
    after = run_toolkit("doctor", "--strict", "--service", "search", cwd=project, env=env)
    assert after.returncode == 0, after


def test_add_migrate_creates_the_tables(tmp_path: Path) -> None:
    project = render_project(tmp_path / "p")
    env = _env()
    added = run_toolkit("add", "search", "--migrate", "--json", cwd=project, env=env)
    assert added.returncode == 0, added
    assert added.json["data"]["tables"] is True
    doctor = run_toolkit("doctor", "--strict", "--service", "search", cwd=project, env=env)
    assert doctor.returncode == 0, doctor


def test_a_battery_without_tables_keeps_the_old_next_step(tmp_path: Path) -> None:
    project = render_project(tmp_path / "p")
    added = run_toolkit("add", "lock", cwd=project, env=_env())
    assert added.returncode == 0, added
    assert added.stdout.splitlines()[-1] == "next: toolkit compile && toolkit doctor"
