"""The document battery's app, adapter names and system checks."""

from __future__ import annotations

import pytest
from django.core import checks
from django.test import override_settings

from tests.support.checks import assert_checks, battery_messages
from toolkit_batteries.core.loading import resolve_adapter

API_KEY = "rk_test_checks_secret_key"
REMOTE = {"adapter": "remote", "options": {"endpoint": "https://render.example.com"}}


def document_messages() -> list[checks.CheckMessage]:
    return battery_messages("toolkit_document")


def remote(**options: object) -> dict:
    return {"adapter": "gotenberg", "options": {**REMOTE["options"], "api_key": API_KEY, **options}}


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [("weasyprint", "local"), ("gotenberg", "remote"), ("pdflatex", "latex"), ("TeX", "latex")],
)
def test_aliases(alias: str, canonical: str) -> None:
    assert resolve_adapter("document", alias)[0] == canonical


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({}, []),
        ({"adapter": "latex"}, []),
        (remote(), []),
        (remote(endpoint=""), ["toolkit_document.E002"]),
        (remote(endpoint="http://render.example.com"), ["toolkit_document.E002"]),
        (remote(endpoint="http://render.example.com", allow_insecure=True), []),
        (remote(endpoint=f"https://u:{API_KEY}@render.example.com"), ["toolkit_document.E002"]),
        (remote(endpoint="https://10.0.0.8:3000"), ["toolkit_document.E002"]),
        (remote(endpoint="https://10.0.0.8:3000", allow_private=True), []),
        ({"options": {"dpi": 3000}}, ["toolkit_document.E003"]),
        ({"adapter": "latex", "options": {"latex_runs": 50}}, ["toolkit_document.E003"]),
        ({"adapter": "latex", "options": {"latex_command": "nope-tex"}}, ["toolkit_document.E004"]),
        ({"options": {"latex_pdf_to_ppm": "nope-ppm"}}, ["toolkit_document.W001"]),
        (
            {"adapter": "latex", "options": {"latex_allow_unsafe_source": True}},
            ["toolkit_document.W002"],
        ),
        ({"adapter": "chromium"}, ["toolkit_document.E001"]),
    ],
)
def test_checks(block: dict, expected: list[str]) -> None:
    assert_checks("document", block, expected, secret=API_KEY)


def test_sandbox_required_without_bwrap_is_an_error(monkeypatch, tmp_path) -> None:
    import os
    import shutil

    os.symlink(shutil.which("pdflatex"), tmp_path / "pdflatex")
    os.symlink(shutil.which("pdftoppm"), tmp_path / "pdftoppm")
    monkeypatch.setenv("PATH", str(tmp_path))
    block = {"adapter": "latex", "options": {"latex_sandbox": "required"}}
    with override_settings(TOOLKIT={"document": block}):
        messages = document_messages()
    assert [m.id for m in messages] == ["toolkit_document.E004"]
    assert "latex_sandbox" in messages[0].msg


def test_sandbox_auto_without_bwrap_is_an_error_outside_development(monkeypatch, tmp_path) -> None:
    import os
    import shutil

    os.symlink(shutil.which("pdflatex"), tmp_path / "pdflatex")
    os.symlink(shutil.which("pdftoppm"), tmp_path / "pdftoppm")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("TOOLKIT_ENV", raising=False)
    with override_settings(TOOLKIT={"document": {"adapter": "latex"}}):
        messages = document_messages()
    assert [m.id for m in messages] == ["toolkit_document.E004"]
    assert "required outside development" in messages[0].msg
    monkeypatch.setenv("TOOLKIT_ENV", "development")
    with override_settings(TOOLKIT={"document": {"adapter": "latex"}}):
        assert document_messages() == []


def test_local_without_weasyprint_is_an_error(monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "weasyprint" else real(name, *a),
    )
    with override_settings(TOOLKIT={"document": {}}):
        messages = document_messages()
    assert [m.id for m in messages] == ["toolkit_document.E005"]
    assert "django-toolkit[document]" in messages[0].hint
