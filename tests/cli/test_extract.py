"""``toolkit extract``: a schema module becomes a standalone, compiled, checkable project."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.subprocesses import run_manage

from .conftest import base_env, render_project, run_toolkit, tree

BILLING = """\
// Invoices and the service that issues them.

entity Invoice {
  id: uuid @primary
  number: string @validate(max_len: 40)
  total: int64
  created_at: timestamp @default(now())
}

service InvoiceService {
  rpc GetInvoice(id: uuid) -> Invoice {
    http: GET "/v1/invoices/{id}"
    auth: required
  }
}
"""


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = render_project(tmp_path_factory.mktemp("extract") / "demo")
    (root / "schema" / "billing").mkdir()
    # Written as bytes with CRLF line ends: the copy must be byte-for-byte.
    (root / "schema" / "billing" / "invoices.toolkit").write_bytes(
        BILLING.replace("\n", "\r\n").encode()
    )
    return root


def test_extract_builds_a_compiled_project_that_passes_check(proj: Path, tmp_path: Path) -> None:
    out = tmp_path / "billing-svc"
    ran = run_toolkit("extract", "billing", "--out", str(out), cwd=proj)
    assert ran.returncode == 0, ran
    assert ran.stdout.splitlines()[0] == (
        f"created project billing-service (package billing_service) in {out.resolve()} from "
        "module billing: 1 schema file(s), entities: Invoice, services: InvoiceService"
    )
    assert f"  cd {out}" in ran.stdout and "  toolkit db migrate" in ran.stdout
    source = proj / "schema" / "billing" / "invoices.toolkit"
    assert (out / "schema" / "billing" / "invoices.toolkit").read_bytes() == source.read_bytes()
    assert not (out / "schema" / "app.toolkit").exists()
    models = (out / "api" / "generated" / "models.py").read_text()
    assert "class Invoice(models.Model):" in models and "Note" not in models
    handlers = (out / "api" / "handlers.py").read_text()
    assert "class InvoiceService" in handlers and "NoteService" not in handlers
    assert (out / "api" / "migrations" / "0001_initial.py").is_file()
    assert not list(out.rglob("__pycache__"))
    check = run_manage(out, "check", env=base_env(TOOLKIT_ENV="dev"))
    assert check.returncode == 0, check.stderr


def test_extract_json_and_default_out(proj: Path) -> None:
    ran = run_toolkit("--json", "extract", "billing", cwd=proj)
    assert ran.returncode == 0, ran
    env = ran.json
    data = env["data"]
    out = proj / "billing-service"
    assert data["module"] == "billing" and data["out"] == str(out.resolve())
    assert data["schema"] == ["schema/billing/invoices.toolkit"]
    assert (
        "api/generated/views.py" in data["files"] and "billing_service/settings.py" in data["files"]
    )
    assert sorted(data["files"]) == sorted(
        p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()
    )
    assert env["breadcrumbs"] == ["toolkit compile", "toolkit check"]
    ran = run_toolkit("extract", "billing", cwd=proj)
    assert ran.returncode == 1 and "not empty" in ran.stderr
    assert run_toolkit("extract", "billing", "--force", cwd=proj).returncode == 0


def test_extract_dry_run_writes_nothing(proj: Path, tmp_path: Path) -> None:
    before = tree(tmp_path)
    ran = run_toolkit("extract", "billing", "--out", "../svc", "--dry-run", cwd=proj)
    assert ran.returncode == 0, ran
    assert ran.stdout.startswith("dry run: would create project billing-service")
    assert "  would write api/generated/models.py" in ran.stdout.splitlines()
    assert tree(tmp_path) == before


def test_extract_refusals(proj: Path) -> None:
    (proj / "schema" / "shop").mkdir()
    (proj / "schema" / "shop" / "orders.toolkit").write_text(
        "entity Order {\n  id: uuid @primary\n}\n"
    )
    before = tree(proj.parent)
    cases = [
        (["app"], "root module"),
        (["default"], "root module"),
        (["../x"], "invalid module name"),
        (["nope"], "no module 'nope' in schema/ (modules: billing, shop)"),
    ]
    for args, message in cases:
        ran = run_toolkit("extract", *args, cwd=proj)
        assert ran.returncode == 3, (args, ran)
        assert message in ran.stderr
    assert tree(proj.parent) == before


def test_extract_refuses_a_module_that_needs_other_modules(proj: Path) -> None:
    (proj / "schema" / "shop").mkdir()
    (proj / "schema" / "shop" / "orders.toolkit").write_text(
        "message OrderView {\n  note: Note\n}\n"
    )
    before = tree(proj.parent)
    ran = run_toolkit("--json", "extract", "shop", cwd=proj)
    assert ran.returncode == 3
    assert "does not compile on its own" in ran.json["error"]
    assert "schema/shop/orders.toolkit:2:" in ran.stderr
    assert tree(proj.parent) == before


def test_extract_refuses_a_schema_with_errors(proj: Path) -> None:
    (proj / "schema" / "app.toolkit").write_text("entity {\n")
    before = tree(proj.parent)
    ran = run_toolkit("extract", "billing", cwd=proj)
    assert ran.returncode == 3
    assert ran.stderr.startswith("schema/app.toolkit:1:")
    assert "fix them before extracting" in ran.stderr
    assert tree(proj.parent) == before


def test_extract_outside_a_project_and_help(tmp_path: Path) -> None:
    ran = run_toolkit("extract", "billing", cwd=tmp_path)
    assert ran.returncode == 1 and "not inside a project" in ran.stderr
    assert run_toolkit("extract", "--help").returncode == 0
