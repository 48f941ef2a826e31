"""The geo battery's system checks (``manage.py check``): IDs, fields, no values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config

SECRET = "AIzaSy-check-key-0123456789"


def ids(block: dict[str, Any]) -> list[str]:
    return [m.id for m in service_checks("geo", Config.load({"geo": {"default": block}}, {}))]


def test_a_good_configuration_passes(tmp_path: Path, settings: Any) -> None:
    settings.BASE_DIR = tmp_path
    (tmp_path / "p.json").write_text("[]")
    assert ids({"adapter": "static", "options": {"path": "p.json"}}) == []
    assert ids({"adapter": "geo_a", "options": {"api_key": SECRET}}) == []
    assert ids({"adapter": "osm", "options": {"user_agent": "app/1 (a@b.c)"}}) == []


def test_geo_a_without_a_key() -> None:
    assert ids({"adapter": "google", "options": {}}) == ["toolkit_geo.E002"]


@pytest.mark.parametrize(
    ("adapter", "options"),
    [
        ("geo_a", {"api_key": SECRET, "base_url": "http://maps.example.com"}),
        ("geo_a", {"api_key": SECRET, "base_url": "https://127.0.0.1:8080"}),
        ("geo_b", {"user_agent": "app/1", "endpoint": "https://geo.example.com/?key=" + SECRET}),
        ("geo_b", {"user_agent": "app/1", "endpoint": "https://localhost"}),
    ],
)
def test_urls_breaking_the_outbound_rules(adapter: str, options: dict[str, Any]) -> None:
    messages = service_checks(
        "geo", Config.load({"geo": {"default": {"adapter": adapter, "options": options}}}, {})
    )
    assert [m.id for m in messages] == ["toolkit_geo.E003"]
    assert SECRET not in messages[0].msg and "example.com" not in messages[0].msg


def test_geo_b_without_a_user_agent() -> None:
    assert ids({"adapter": "geo_b", "options": {}}) == ["toolkit_geo.E004"]


def test_static_paths(tmp_path: Path, settings: Any) -> None:
    settings.BASE_DIR = tmp_path
    assert ids({"adapter": "static", "options": {"path": "../x.json"}}) == ["toolkit_geo.E005"]
    assert ids({"adapter": "static", "options": {"path": "missing.json"}}) == ["toolkit_geo.E005"]
    assert ids({"adapter": "static", "options": {}}) == []


def test_negative_bounds() -> None:
    assert ids({"adapter": "static", "options": {"timeout": "-1s"}}) == ["toolkit_geo.E006"]
