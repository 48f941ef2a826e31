"""``toolkit explain``: the facts of one rpc, by Service.Rpc or Module.Service.Rpc."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import REPO

SCHEMAS = REPO / "tests" / "codegen" / "schemas"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("explain")
    shutil.copytree(SCHEMAS / "multi_service", root / "schema")
    shutil.copytree(SCHEMAS / "every_feature", root / "shop")
    return root


def test_text_block(toolkit, work: Path) -> None:
    ran = toolkit("explain", "PaymentService.RecordPayment", cwd=work)
    assert ran.returncode == 0, ran
    assert ran.stdout.splitlines() == [
        "billing.PaymentService.RecordPayment  schema/billing/billing.toolkit:43:3",
        "  transports: HTTP POST /v1/invoices/{invoice_id}/payments",
        "  auth:       required (roles: billing)",
        '  errors:     not_found (404), failed_precondition (400) "the invoice is already paid"',
        "  paginated:  no",
        "  params:",
        "    invoice_id:   uuid (path)",
        "    amount_cents: int64 (body)  @validate(gt: 0)",
        "  ids:",
        "    invoice_id: an existing Invoice; else 400, as an unknown id "
        "(the CRUD default checks it)",
        "  returns:    Payment (entity)",
        "  runs:       the ORM CRUD default (create) unless handlers.py "
        "PaymentService.record_payment is defined",
    ]


def test_paginated_json(toolkit, work: Path) -> None:
    ran = toolkit("--json", "explain", "(root).CustomerService.ListCustomers", "shop", cwd=work)
    assert ran.returncode == 0, ran
    env = ran.json
    assert env["breadcrumbs"] == ["toolkit routes", "toolkit compile"]
    data = env["data"]
    assert data["operation"] == "(root).CustomerService.ListCustomers"
    assert data["transports"] == [{"kind": "http", "method": "GET", "path": "/v1/customers"}]
    assert data["auth"] == {"required": True, "roles": ["admin", "support"]}
    assert data["paginated"] is True
    assert [(p["name"], p["in"]) for p in data["params"]] == [
        ("role", "query"),
        ("cursor", "query"),
        ("limit", "query"),
    ]
    assert data["returns"] == {"type": "Customer", "kind": "entity", "paginated": True}


def test_root_module_aliases(toolkit, work: Path) -> None:
    ran = toolkit("explain", "root.AccountService.GetAccount", cwd=work)
    assert ran.returncode == 0, ran
    assert ran.stdout.startswith("(root).AccountService.GetAccount  schema/app.toolkit:17:3\n")
    assert "  auth:       required\n" in ran.stdout
    # The service exists, but not in that module.
    wrong = toolkit("explain", "billing.AccountService.GetAccount", cwd=work)
    assert wrong.returncode == 3


def test_not_found_suggests(toolkit, work: Path) -> None:
    ran = toolkit("explain", "PaymentService.RecordPaymnt", cwd=work)
    assert ran.returncode == 3
    assert (
        'toolkit explain: no operation matches "PaymentService.RecordPaymnt" '
        '(did you mean "PaymentService.RecordPayment"?)'
    ) in ran.stderr
    env = toolkit("--json", "explain", "paymentservice.recordpayment", cwd=work).json
    assert env["exitCode"] == 3 and 'did you mean "PaymentService.RecordPayment"' in env["error"]


def test_malformed_name_exit_2(toolkit, work: Path) -> None:
    ran = toolkit("explain", "a.b.c.d", cwd=work)
    assert ran.returncode == 2 and "want Service.Rpc or Module.Service.Rpc" in ran.stderr
    missing = toolkit("explain", cwd=work)
    assert missing.returncode == 2


def test_schema_errors_exit_3(toolkit, tmp_path: Path) -> None:
    (tmp_path / "app.toolkit").write_text("entity {")
    ran = toolkit("explain", "A.B", "app.toolkit", cwd=tmp_path)
    assert ran.returncode == 3 and "[parse]" in ran.stderr
