"""``toolkit compile``: standalone into --out, and inside a project as compile_schema."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import REPO, SCRIPT, Ran, base_env, render_project, run_toolkit, tree

SCHEMAS = REPO / "tests" / "codegen" / "schemas"
ALL = "django,sql,openapi,mcp"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a directory holding ``schema/`` (the two-module sample)."""
    root = tmp_path_factory.mktemp("compile")
    shutil.copytree(SCHEMAS / "multi_service", root / "schema")
    return root


@pytest.fixture(scope="module")
def compiled(work: Path) -> Ran:
    """Compile every backend into ``out/`` once; the tests below share the run."""
    ran = run_toolkit("--json", "compile", "--backend", ALL, "--out", "out", cwd=work)
    return ran


def test_dry_run_writes_nothing(toolkit, work: Path) -> None:
    before = tree(work)
    ran = toolkit("compile", "--dry-run", "--backend", ALL, "--out", "dry", cwd=work)
    assert ran.returncode == 0, ran
    assert tree(work) == before
    assert "would write dry/openapi/openapi.json" in ran.stdout
    assert "would write dry/mcp/handlers.py" in ran.stdout
    assert "dry run" in ran.stdout
    assert "discovered 2 file(s) under schema/" in ran.stderr


def test_compile_json_and_files(compiled, work: Path) -> None:
    assert compiled.returncode == 0, compiled
    env = compiled.json
    assert env["breadcrumbs"] == ["toolkit check", "toolkit explain", "toolkit extract"]
    data = env["data"]
    assert data["files"] == 2 and data["outDir"] == "out"
    assert data["backends"] == [
        "models",
        "migrations",
        "serializers",
        "views",
        "urls",
        "sql",
        "openapi",
        "mcp",
    ]
    assert data["outputs"]["openapi"] == [
        "billing/openapi.json",
        "default/openapi.json",
        "openapi.json",
    ]
    assert data["outputs"]["migrations"] == ["migrations/0001_initial.py"]
    assert data["total"] == sum(len(v) for v in data["outputs"].values())
    for backend, names in data["outputs"].items():
        for name in names:
            assert (work / "out" / backend / name).is_file()
    assert {c["action"] for c in data["changes"]} == {"create"}


def test_recompile_is_deterministic_and_keeps_handlers(toolkit, compiled, work: Path) -> None:
    assert compiled.returncode == 0
    handlers = work / "out" / "mcp" / "handlers.py"
    handlers.write_text(handlers.read_text() + "\n# my code\n")
    before = tree(work / "out")
    ran = toolkit("compile", "--backend", ALL, "--out", "out", "schema", cwd=work)
    assert ran.returncode == 0, ran
    assert tree(work / "out") == before  # same bytes; handlers.py and 0001 untouched
    assert "# my code" in handlers.read_text()
    assert "kept out/mcp/handlers.py" in ran.stdout
    line = ran.stdout.splitlines()[-1]
    assert line.startswith("✔ compiled 2 file(s) → out (")
    assert line.endswith(
        "outputs, backends: models, migrations, serializers, views, urls, sql, openapi, mcp)"
    )


def test_default_backends_and_out(toolkit, tmp_path: Path) -> None:
    shutil.copy(SCHEMAS / "spec_example" / "app.toolkit", tmp_path / "app.toolkit")
    ran = toolkit("compile", "app.toolkit", cwd=tmp_path)
    assert ran.returncode == 0, ran
    assert "→ generated (" in ran.stdout
    assert "backends: models, migrations, serializers, views, urls, sql, openapi)" in ran.stdout
    assert (tmp_path / "generated" / "sql" / "postgres" / "schema.sql").is_file()
    assert not (tmp_path / "generated" / "mcp").exists()  # mcp is opt-in


def test_unknown_backend_is_usage_error(toolkit, work: Path) -> None:
    ran = toolkit("compile", "--backend", "opnapi", "--out", "x", cwd=work)
    assert ran.returncode == 2
    assert 'unknown backend "opnapi" (did you mean "openapi"? available: ' in ran.stderr
    assert not (work / "x").exists()
    env = toolkit("--json", "compile", "--backend=sql,nope", cwd=work).json
    assert env["exitCode"] == 2 and "mcp, django" in env["error"]


def test_schema_errors_write_nothing(toolkit, tmp_path: Path) -> None:
    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "app.toolkit").write_text("entity A {\n  id: uuid @primary\n  x: y\n}\n")
    ran = toolkit("--json", "compile", "--out", "out", cwd=tmp_path)
    assert ran.returncode == 3
    assert ran.json["error"] == "toolkit compile: 1 file(s) failed to compile"
    assert ran.json["data"]["diagnostics"][0]["file"] == "schema/app.toolkit"
    assert "schema/app.toolkit:3:6: [resolve]" in ran.stderr
    assert not (tmp_path / "out").exists()


#: Names Python accepts but the generated Django code cannot take: ``models`` rebound
#: ``models`` for the fields after it (models.py failed on import), ``delete`` replaced
#: ``Model.delete``, ``Tier`` hid the enum class, ``request`` duplicated the handler's
#: own parameter (a SyntaxError in handlers.py). Each compiled with exit 0 before.
NAMES_DJANGO_CANNOT_TAKE = """enum Tier { free, pro }

entity Row {
  id: uuid @primary
  models: string @validate(max_len: 10)
  delete: bool
  Tier: string @validate(max_len: 3)
  tier: Tier
}

service S {
  rpc Get(id: uuid, request: string @validate(max_len: 3)) -> Row {
    http: GET "/v1/rows/{id}"
    auth: none
  }
}
"""


def test_names_the_generated_django_code_cannot_take_are_diagnostics(
    toolkit, tmp_path: Path
) -> None:
    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "app.toolkit").write_text(NAMES_DJANGO_CANNOT_TAKE)
    ran = toolkit("--json", "compile", "--backend", "django", "--out", "out", cwd=tmp_path)
    assert ran.returncode == 3, ran
    found = {
        (d["line"], d["column"], d["message"].split(";")[0])
        for d in ran.json["data"]["diagnostics"]
        if d["phase"] == "models"
    }
    assert found == {
        (5, 3, "field models would hide a name the generated classes use"),
        (6, 3, "field delete would replace an attribute every Django model has"),
        (7, 3, "field Tier has the name of a declared type, which the generated classes use"),
        (12, 21, "parameter request is a parameter every handler method has"),
    }
    assert not (tmp_path / "out").exists()


def test_out_must_be_a_directory(toolkit, work: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    ran = toolkit("compile", "--out", str(tmp_path / "file"), "schema", cwd=work)
    assert ran.returncode == 3 and "is not a directory" in ran.stderr


def test_progress_on_a_terminal(work: Path, tmp_path: Path) -> None:
    """Progress is drawn on stderr only when it is a terminal (none in the other tests)."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.run(
            [str(SCRIPT), "compile", "--backend", "sql,openapi", "--out", str(tmp_path / "o")],
            cwd=work,
            env=base_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
            timeout=60,
            check=False,
        )
        os.close(slave)
        slave = -1
        chunks = []
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if slave != -1:
            os.close(slave)
        os.close(master)
    err = b"".join(chunks).decode()
    assert proc.returncode == 0
    assert "[1/2] backend openapi" in err and "[2/2] compiled" in err


@pytest.fixture(scope="module")
def project_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_project(tmp_path_factory.mktemp("proj") / "demo")


def test_project_dry_run_then_compile(toolkit, project_dir: Path) -> None:
    before = tree(project_dir)
    dry = toolkit("compile", "--dry-run", cwd=project_dir)
    assert dry.returncode == 0, dry
    assert tree(project_dir) == before
    assert "would create api/generated/models.py" in dry.stdout
    assert "would create api/migrations/0001_initial.py" in dry.stdout
    assert "dry run" in dry.stdout

    ran = toolkit("--json", "compile", cwd=project_dir)
    assert ran.returncode == 0, ran
    data = ran.json["data"]
    actions = {c["path"]: c["action"] for c in data["changes"]}
    assert actions["api/generated/views.py"] == "create"
    assert actions["api/migrations/0001_initial.py"] == "create"
    assert data["outDir"] == "api" and data["files"] == 1
    assert "api/generated/urls.py" in data["outputs"]["django"]
    assert (project_dir / "api" / "generated" / "models.py").is_file()
    assert (project_dir / "api" / "migrations" / "0001_initial.py").is_file()
    assert "toolkit db migrate" in ran.json["hint"]

    again = toolkit("compile", cwd=project_dir)
    assert again.returncode == 0, again
    assert "nothing to change" in again.stdout
    assert "✔ compiled 1 file(s) → api (" in again.stdout


def test_project_schema_error_exit_3(toolkit, tmp_path: Path) -> None:
    project = render_project(tmp_path / "demo")
    schema = project / "schema" / "app.toolkit"
    schema.write_text(schema.read_text().replace("done: bool", "done: boool"))
    ran = toolkit("compile", cwd=project)
    assert ran.returncode == 3, ran
    assert "schema/app.toolkit:" in ran.stderr and "boool" in ran.stderr
    assert not (project / "api" / "generated").exists()


def test_help(toolkit) -> None:
    ran = toolkit("compile", "-h")
    assert ran.returncode == 0 and "--backend" in ran.stdout and "--dry-run" in ran.stdout
