"""``toolkit new``: render the project template, add batteries, refuse what is unsafe.

Every run is the installed console script in a subprocess; the rendered project is then
checked by its own ``manage.py check`` in a fresh interpreter.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.subprocesses import run_manage
from tests.test_template import EXPECTED_FILES, NAME

from .conftest import base_env, run_toolkit, tree


def _expected(package: str) -> set[str]:
    """Return the rendered files of a project named ``package`` (the template's own list)."""
    return {rel.replace(f"{NAME}/", f"{package}/", 1) for rel in EXPECTED_FILES}


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_new_renders_the_template_and_prints_next_steps(tmp_path: Path) -> None:
    ran = run_toolkit("new", "demo", cwd=tmp_path)
    assert ran.returncode == 0, ran
    project = tmp_path / "demo"
    assert _files(project) == _expected("demo")
    assert "created project demo (package demo)" in ran.stdout
    assert "with batteries: db, log, auth, password, ratelimit" in ran.stdout
    tail = [line.split("#")[0].strip() for line in ran.stdout.split("next steps:")[1].splitlines()]
    assert [line for line in tail if line] == [
        "cd ./demo",
        "export TOOLKIT_ENV=development",
        "toolkit compile",
        "toolkit db migrate",
        "toolkit serve",
    ]
    assert "production: DJANGO_SECRET_KEY instead" in ran.stdout
    settings = (project / "demo" / "settings.py").read_text()
    assert "{{" not in settings and 'ROOT_URLCONF = "demo.urls"' in settings


def test_new_json_with_batteries_then_manage_check_passes(tmp_path: Path) -> None:
    target = tmp_path / "out" / "shop"
    ran = run_toolkit(
        "--json", "new", "shop-api", "--dir", str(target), "--batteries", "cache/redis, queue"
    )
    assert ran.returncode == 0, ran
    env = ran.json
    assert env["ok"] is True and env["command"] == "new" and env["exitCode"] == 0
    data = env["data"]
    assert data["name"] == "shop-api" and data["package"] == "shop_api"
    assert data["dir"] == str(target.resolve())
    assert set(data["files"]) == _expected("shop_api") == _files(target)
    # The template's own batteries (those with tables are always listed), then the extras.
    assert data["batteries"] == [
        "db",
        "log",
        "auth",
        "password",
        "ratelimit",
        "mailer",
        "storage",
        "media",
        "cache",
        "queue",
        "idempotency",
        "session",
        "scheduler",
    ]
    assert env["breadcrumbs"] == ["toolkit generate", "toolkit compile"]
    settings = (target / "shop_api" / "settings.py").read_text()
    assert '"cache": {"adapter": "kvserver"},' in settings  # the alias, canonical
    assert '"toolkit_batteries.queue",' in settings
    check = run_manage(target, "check", env=base_env(TOOLKIT_ENV="dev"))
    assert check.returncode == 0, check.stderr
    assert "no issues" in check.stdout


def test_new_dry_run_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    before = tree(tmp_path)
    ran = run_toolkit("new", "demo", "--dir", "empty", "--dry-run", cwd=tmp_path)
    assert ran.returncode == 0, ran
    assert tree(tmp_path) == before
    first = ran.stdout.splitlines()[0]
    where = (tmp_path / "empty").resolve()
    assert first == (
        f"dry run: would create project demo (package demo) in {where} "
        "with batteries: db, log, auth, password, ratelimit, mailer, storage, media, cache, queue, "
        "idempotency, session, scheduler"
    )
    assert "  would write demo/settings.py" in ran.stdout.splitlines()
    ran = run_toolkit("--json", "new", "demo", "--dry-run", "--batteries", "lock", cwd=tmp_path)
    assert ran.json["data"]["dryRun"] is True and "lock" in ran.json["data"]["batteries"]
    assert tree(tmp_path) == before


def test_new_refuses_a_non_empty_directory_unless_forced(tmp_path: Path) -> None:
    target = tmp_path / "demo"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    (target / "manage.py").write_text("old")
    before = tree(tmp_path)
    ran = run_toolkit("new", "demo", cwd=tmp_path)
    assert ran.returncode == 1
    assert "not empty" in ran.stderr and "--force" in ran.stderr
    assert tree(tmp_path) == before
    ran = run_toolkit("new", "demo", "--force", cwd=tmp_path)
    assert ran.returncode == 0, ran
    assert (target / "keep.txt").read_text() == "mine"
    assert (target / "manage.py").read_text() != "old"
    assert _files(target) == _expected("demo") | {"keep.txt"}


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../x", "letters, digits"),
        ("a/b", "letters, digits"),
        ("test", "shadow"),
        ("django", "shadow"),
        ("toolkit-batteries", "shadow"),
        ("class", "keyword"),
        ("9lives", "identifier"),
        ("api", "template already has"),
    ],
)
def test_new_refuses_unsafe_or_unusable_names(tmp_path: Path, name: str, reason: str) -> None:
    ran = run_toolkit("new", name, cwd=tmp_path)
    assert ran.returncode == 3, ran
    assert reason in ran.stderr
    assert list(tmp_path.iterdir()) == []


def test_new_errors_in_json_mode_and_usage(tmp_path: Path) -> None:
    ran = run_toolkit("--json", "new", "../escape", cwd=tmp_path)
    assert ran.returncode == 3
    env = ran.json
    assert env["ok"] is False and env["exitCode"] == 3 and "../escape" in env["error"]
    ran = run_toolkit("new", cwd=tmp_path)
    assert ran.returncode == 2 and "missing project name" in ran.stderr
    ran = run_toolkit("new", "demo", "--batteries", "cach", cwd=tmp_path)
    assert ran.returncode == 3 and 'did you mean "cache"' in ran.stderr
    assert list(tmp_path.iterdir()) == []


def test_new_list_batteries_in_text_and_json(tmp_path: Path) -> None:
    ran = run_toolkit("new", "--list-batteries", cwd=tmp_path)
    assert ran.returncode == 0, ran
    rows = {line.split()[0]: line.split() for line in ran.stdout.splitlines()[1:-1]}
    assert len(rows) == 37
    assert rows["cache"][:4] == ["cache", "memory", "yes", "implemented"]
    assert all(row[3] == "implemented" for row in rows.values())
    data = run_toolkit("--json", "new", "--list-batteries").json["data"]["batteries"]
    by_name = {row["name"]: row for row in data}
    assert len(by_name) == 37
    assert by_name["cache"]["implemented"] == ["memory", "kvserver", "db"]
    assert by_name["cache"]["aliases"]["redis"] == "kvserver"
    assert by_name["ai"]["implemented"] == ["llm_a", "llm_b", "llm_c", "llm_d"]
    assert by_name["ai"]["default"] == "llm_a"
    # the older SQL names are aliases of the canonical db adapter, not planned adapters
    assert by_name["search"]["aliases"]["sqlfile"] == "db"
    assert list(tmp_path.iterdir()) == []


def test_new_help() -> None:
    ran = run_toolkit("new", "--help")
    assert ran.returncode == 0
    assert "--list-batteries" in ran.stdout and "--dry-run" in ran.stdout
