"""``toolkit check-boundaries`` (alias ``check:boundaries``): cross-module references."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import REPO, run_toolkit

FIXTURE = REPO / "tests" / "codegen" / "schemas" / "background"

ROOT = """entity User {
  id: uuid @primary
  has_many invoices: Invoice @foreign_key(user_id)
}

service UserService {
  rpc LastInvoice(id: uuid) -> Invoice {
    http: GET "/users/{id}/last"
    permission: check("invoice.read", resource: Invoice, owner_field: user_id)
  }
}
"""
BILLING = """entity Invoice {
  id: uuid @primary
  user_id: uuid
  belongs_to user: User @foreign_key(user_id)
}
"""


def crossing_schema(tmp_path: Path) -> Path:
    schema = tmp_path / "schema"
    (schema / "billing").mkdir(parents=True)
    (schema / "app.toolkit").write_text(ROOT)
    (schema / "billing" / "b.toolkit").write_text(BILLING)
    return schema


def test_relations_return_types_and_permission_resources_must_stay_in_their_module(
    tmp_path: Path,
) -> None:
    crossing_schema(tmp_path)
    ran = run_toolkit("check-boundaries", cwd=tmp_path)
    assert ran.returncode == 3, ran
    lines = [line for line in ran.stderr.splitlines() if "[boundaries]" in line]
    assert lines == [
        "schema/app.toolkit:3:3: [boundaries] relation User.invoices crosses from module "
        "(root) to Invoice in module billing; reference it by id (a plain column) or move "
        "the entities into one module",
        "schema/app.toolkit:7:32: [boundaries] rpc UserService.LastInvoice in module (root) "
        "returns Invoice from module billing; return a message declared in this module",
        "schema/app.toolkit:9:49: [boundaries] permission of rpc UserService.LastInvoice in "
        "module (root) checks resource Invoice from module billing; guard a resource of this "
        "module",
        "schema/billing/b.toolkit:4:3: [boundaries] relation Invoice.user crosses from module "
        "billing to User in module (root); reference it by id (a plain column) or move the "
        "entities into one module",
    ]
    assert "4 reference(s) cross a module boundary" in ran.stderr


def test_alias_and_json(tmp_path: Path) -> None:
    crossing_schema(tmp_path)
    env = run_toolkit("--json", "check:boundaries", "schema", cwd=tmp_path).json
    assert env["exitCode"] == 3 and env["command"] == "check-boundaries"
    assert env["data"]["crossings"] == 4
    assert {d["phase"] for d in env["data"]["diagnostics"]} == {"boundaries"}


def test_sagas_may_call_rpcs_of_other_modules() -> None:
    # The fixture's saga PlaceOrder (root module) charges through billing's InvoiceService.
    ran = run_toolkit("check-boundaries", str(FIXTURE), cwd=REPO)
    assert ran.returncode == 0, ran
    assert "✔ 2 module(s), no reference crosses a module boundary" in ran.stdout


def test_an_invalid_schema_is_reported_first(tmp_path: Path) -> None:
    (tmp_path / "app.toolkit").write_text("entity A { b: strng }\n")
    ran = run_toolkit("check-boundaries", "app.toolkit", cwd=tmp_path)
    assert ran.returncode == 3
    assert 'unknown type strng (did you mean "string"?)' in ran.stderr
