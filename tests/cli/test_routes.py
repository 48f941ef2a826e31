"""``toolkit routes``: one line per HTTP rpc, sorted by path then method."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import REPO

SCHEMAS = REPO / "tests" / "codegen" / "schemas"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("routes")
    shutil.copytree(SCHEMAS / "multi_service", root / "schema")
    (root / "bad").mkdir()
    (root / "bad" / "app.toolkit").write_text("service S {\n  rpc R() -> Nope { auth: none }\n}\n")
    return root


def test_text(toolkit, work: Path) -> None:
    ran = toolkit("routes", cwd=work)
    assert ran.returncode == 0, ran
    routes = [
        ("POST /v1/accounts -> (root).AccountService.CreateAccount", "none"),
        ("GET /v1/accounts/{id} -> (root).AccountService.GetAccount", "required"),
        (
            "POST /v1/admin/accounts/{id}/disable -> (root).AdminService.DisableAccount",
            "required (roles: admin)",
        ),
        ("GET /v1/invoices -> billing.InvoiceService.ListInvoices", "required"),
        ("POST /v1/invoices -> billing.InvoiceService.CreateInvoice", "required (roles: billing)"),
        ("GET /v1/invoices/{id} -> billing.InvoiceService.GetInvoice", "required"),
        (
            "POST /v1/invoices/{invoice_id}/payments -> billing.PaymentService.RecordPayment",
            "required (roles: billing)",
        ),
    ]
    width = max(len(route) for route, _ in routes)
    assert ran.stdout.splitlines() == [
        f"{route.ljust(width)}  auth: {auth}" for route, auth in routes
    ]
    assert "discovered 2 file(s) under schema/" in ran.stderr


def test_json(toolkit, work: Path) -> None:
    ran = toolkit("--json", "routes", "schema", cwd=work)
    assert ran.returncode == 0, ran
    env = ran.json
    assert env["breadcrumbs"] == ["toolkit explain"]
    rows = env["data"]
    assert len(rows) == 7
    assert rows[5] == {
        "method": "GET",
        "path": "/v1/invoices/{id}",
        "module": "billing",
        "service": "InvoiceService",
        "rpc": "GetInvoice",
        "auth": "required",
        "roles": [],
        "permission": None,
        "paginated": False,
        "file": "schema/billing/billing.toolkit",
        "line": 29,
    }
    assert rows[0]["auth"] == "none" and rows[2]["roles"] == ["admin"]


def test_schema_errors_exit_3(toolkit, work: Path) -> None:
    ran = toolkit("routes", "bad", cwd=work)
    assert ran.returncode == 3 and "bad/app.toolkit:2:" in ran.stderr
    assert ran.stdout == ""


def test_no_input_exit_2(toolkit, tmp_path: Path) -> None:
    ran = toolkit("routes", cwd=tmp_path)
    assert ran.returncode == 2 and "no input .toolkit files given" in ran.stderr
