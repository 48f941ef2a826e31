"""``toolkit graph``: Mermaid text, a well-formed SVG, a PNG, and their failure modes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .conftest import base_env

ROOT = """entity Account {
  id: uuid @primary
  email: string @unique
  has_many orders: Order @foreign_key(account_id)
}

entity Order {
  id: uuid @primary
  account_id: uuid
  belongs_to account: Account @foreign_key(account_id)
}
"""
BILLING = """entity Invoice {
  id: uuid @primary
}

service InvoiceService {
  rpc Owner(id: uuid) -> Account {
    http: GET "/v1/invoices/{id}/owner"
    auth: required
  }
}
"""
SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("graph")
    (root / "schema" / "billing").mkdir(parents=True)
    (root / "schema" / "app.toolkit").write_text(ROOT)
    (root / "schema" / "billing" / "invoices.toolkit").write_text(BILLING)
    return root


def test_mermaid(toolkit, work: Path) -> None:
    ran = toolkit("graph", cwd=work)
    assert ran.returncode == 0, ran
    assert ran.stdout == (
        "```mermaid\n"
        "graph TD\n"
        "  %% module: root\n"
        '  Account["Account"]\n'
        '  Order["Order"]\n'
        "  Account -->|has_many| Order\n"
        "  Order -->|belongs_to| Account\n"
        "```\n"
        "\n"
        "```mermaid\n"
        "graph TD\n"
        "  %% module: billing\n"
        '  Invoice["Invoice"]\n'
        "```\n"
        "\n"
        "```mermaid\n"
        "graph LR\n"
        "  %% modules\n"
        '  root["root"]\n'
        '  billing["billing"]\n'
        "  billing -->|rpc| root\n"
        "```\n"
    )


def test_svg_well_formed(toolkit, work: Path) -> None:
    ran = toolkit("graph", "--format", "svg", "schema", cwd=work)
    assert ran.returncode == 0, ran
    svg = ET.fromstring(ran.stdout.encode())
    assert svg.tag == f"{SVG_NS}svg"
    entities = {
        g.get("data-name"): g.get("data-module")
        for g in svg.iter(f"{SVG_NS}g")
        if g.get("class") == "entity"
    }
    assert entities == {"Account": "root", "Order": "root", "Invoice": "billing"}
    relations = [g for g in svg.iter(f"{SVG_NS}g") if g.get("class") == "relation"]
    assert len(relations) == 1  # both sides of Account/Order merge into one edge
    assert (relations[0].get("data-from"), relations[0].get("data-to")) == ("Account", "Order")
    texts = "".join(t.text or "" for t in svg.iter(f"{SVG_NS}text"))
    assert "email: string" in texts and "has_many, belongs_to" in texts


def test_svg_out_file_and_json(toolkit, work: Path) -> None:
    ran = toolkit("--json", "graph", "--out", "pics/schema.svg", cwd=work)
    assert ran.returncode == 0, ran
    data = ran.json["data"]
    assert data["format"] == "svg" and data["out"] == "pics/schema.svg"
    assert (data["modules"], data["entities"], data["relations"]) == (2, 3, 2)
    written = (work / "pics" / "schema.svg").read_bytes()
    assert data["bytes"] == len(written)
    ET.fromstring(written)


def test_mermaid_json_carries_text(toolkit, work: Path) -> None:
    env = toolkit("--json", "graph", cwd=work).json
    assert env["ok"] is True and env["data"]["text"].startswith("```mermaid\ngraph TD\n")


def test_png(toolkit, work: Path) -> None:
    # cairosvg is in the dev extra: a missing one fails here rather than skipping.
    ran = toolkit("graph", "--format", "png", "--out", "schema.png", cwd=work)
    assert ran.returncode == 0, ran
    assert (work / "schema.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "✔ wrote schema.png (png," in ran.stdout


def test_png_needs_out(toolkit, work: Path) -> None:
    ran = toolkit("graph", "--format", "png", cwd=work)
    assert ran.returncode == 2 and "needs --out" in ran.stderr


def test_png_without_the_extra(toolkit, work: Path, tmp_path: Path) -> None:
    shim = tmp_path / "shim" / "cairosvg"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text('raise ImportError("cairosvg is not installed")\n')
    ran = toolkit("graph", "--out", "x.png", cwd=work, env=base_env(PYTHONPATH=str(shim.parent)))
    assert ran.returncode == 1, ran
    assert "needs the optional cairosvg package" in ran.stderr
    assert "django-toolkit[graph]" in ran.stderr
    assert not (work / "x.png").exists()


def test_out_directory_refused(toolkit, work: Path) -> None:
    (work / "adir").mkdir(exist_ok=True)
    ran = toolkit("graph", "--out", "adir", cwd=work)
    assert ran.returncode == 3 and "is a directory" in ran.stderr


def test_errors_draw_best_effort_then_exit_3(toolkit, tmp_path: Path) -> None:
    (tmp_path / "app.toolkit").write_text(ROOT.replace("email: string", "email: strng"))
    ran = toolkit("graph", "app.toolkit", cwd=tmp_path)
    assert ran.returncode == 3
    assert "  Account -->|has_many| Order" in ran.stdout
    assert "unknown type strng" in ran.stderr and "1 file(s) failed to compile" in ran.stderr
    out = toolkit("graph", "--out", "g.svg", "app.toolkit", cwd=tmp_path)
    assert out.returncode == 3 and not (tmp_path / "g.svg").exists()


def test_bad_format_exit_2(toolkit, work: Path) -> None:
    ran = toolkit("graph", "--format", "dot", cwd=work)
    assert ran.returncode == 2 and "invalid choice" in ran.stderr


def test_png_scale_fits_cairo_limits() -> None:
    from toolkit_batteries.cli.graphing.png import MAX_PIXELS, MAX_SIDE, fit_scale

    assert fit_scale(800, 600) == 1.0
    tall = fit_scale(360, 150_000)  # a 500-entity belongs_to chain
    assert 150_000 * tall <= MAX_SIDE
    wide = fit_scale(30_000, 30_000)
    assert (30_000 * wide) ** 2 <= MAX_PIXELS * 1.0001
