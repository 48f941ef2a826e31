"""``manage.py compile_schema`` in a real project process (a copy of the test project).

The command's contract: ``--dry-run`` writes nothing; a compile writes the generated
modules, the first migration and a ``models.py``, never touching hand-written handlers;
``migrate`` and ``makemigrations --check`` agree with what it wrote; a schema change adds
``0002`` and appends handler stubs; schema errors print ``file:line:col: [phase] message``
lines and exit 3 with no traceback and nothing written.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

try:
    from .django_support import PROJECT
except ImportError:  # rootdir-relative import mode (tests/codegen is not a package)
    from django_support import PROJECT

#: Runs ``migrate`` then ``makemigrations --check`` in one process (exit 1: models drifted).
_MIGRATE_AND_CHECK = (
    "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'project.settings'; "
    "django.setup(); from django.core.management import call_command; "
    "call_command('migrate', verbosity=0); "
    "call_command('makemigrations', check=True, dry_run=True, verbosity=0)"
)


def copy_project(tmp_path: Path) -> Path:
    """Return a fresh copy of the test project (schema, settings, hand-written handlers)."""
    target = tmp_path / "project_copy"
    shutil.copytree(PROJECT, target, ignore=shutil.ignore_patterns("__pycache__", "*.sqlite3"))
    return target


def run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python <args>`` in the project, on its own SQLite file."""
    env = {**os.environ, "TKPROJ_DATABASE": str(project / "db.sqlite3")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, *args], cwd=project, env=env, capture_output=True, text=True, timeout=120
    )


def snapshot(root: Path) -> dict[str, bytes]:
    """Return every file under ``root`` (except caches and the database) with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".sqlite3"
    }


def test_compile_migrate_and_recompile_after_a_schema_change(tmp_path: Path) -> None:
    project = copy_project(tmp_path)
    handlers = (project / "api" / "handlers.py").read_text()
    before = snapshot(project)

    dry = run(project, "manage.py", "compile_schema", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would create api/generated/views.py" in dry.stdout
    assert "would create api/migrations/0001_initial.py" in dry.stdout
    assert snapshot(project) == before  # a dry run writes nothing

    done = run(project, "manage.py", "compile_schema")
    assert done.returncode == 0, done.stderr
    for rel in ("generated/models.py", "generated/urls.py", "migrations/0001_initial.py"):
        assert f"create api/{rel}" in done.stdout
        assert (project / "api" / rel).is_file()
    assert "handlers.py" not in done.stdout
    assert (project / "api" / "handlers.py").read_text() == handlers  # untouched

    checked = run(project, "-c", _MIGRATE_AND_CHECK)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    again = run(project, "manage.py", "compile_schema")
    assert (again.returncode, again.stdout.strip()) == (0, "nothing to change")

    schema = project / "schema" / "app.toolkit"
    schema.write_text(
        schema.read_text()
        .replace(
            "  name: string @validate(min_len: 1, max_len: 100)\n",
            "  name: string @validate(min_len: 1, max_len: 100)\n"
            "  nickname: string? @validate(max_len: 40)\n",
            1,
        )
        .replace(
            "service OrderService {",
            "service OrderService {\n"
            '  rpc CountOrders(user_id: uuid) -> OrderStats { http: GET "/v1/counts/{user_id}"; '
            "auth: required }\n",
        )
    )
    changed = run(project, "manage.py", "compile_schema")
    assert changed.returncode == 0, changed.stderr
    assert "create api/migrations/0002_user_nickname.py" in changed.stdout
    assert "append api/handlers.py" in changed.stdout
    assert (project / "api" / "migrations" / "0001_initial.py").read_bytes() == (
        snapshot(project)["api/migrations/0001_initial.py"]
    )
    updated = (project / "api" / "handlers.py").read_text()
    remaining = iter(updated.splitlines())
    assert all(line in remaining for line in handlers.splitlines())  # every line kept, in order
    assert "def count_orders(self, request: Request, *, user_id: uuid.UUID) -> Any:" in updated

    checked = run(project, "-c", _MIGRATE_AND_CHECK)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_schema_errors_exit_3_with_diagnostics_and_write_nothing(tmp_path: Path) -> None:
    project = copy_project(tmp_path)
    schema = project / "schema" / "app.toolkit"
    schema.write_text(
        schema.read_text().replace("  quantity: int32 @validate", "  quantity: int33 @validate", 1)
    )
    before = snapshot(project)
    failed = run(project, "manage.py", "compile_schema")
    assert failed.returncode == 3
    assert "Traceback" not in failed.stderr
    lines = failed.stderr.strip().splitlines()
    assert lines[0].startswith("schema/app.toolkit:22:13: [")
    assert "int33" in lines[0] and "int32" in lines[0]  # the "did you mean"
    assert lines[-1] == "CommandError: schema has 1 error; nothing was written"
    assert snapshot(project) == before

    unknown = run(project, "manage.py", "compile_schema", "--app", "shop")
    assert unknown.returncode == 3
    assert "Traceback" not in unknown.stderr
    assert 'no installed app with label "shop"' in unknown.stderr
