"""What only the ``embed`` adapter has: the directory, its reload, its defaults."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError

from .conftest import EN_PLURAL, embed_block, write_catalogs


def open_embed(directory: Path, **options):
    return Container(Config.load({"i18n": embed_block(directory, **options)}, {})).i18n()


def test_defaults_match_the_spec() -> None:
    options = Config.load({}, {}).service("i18n").options
    assert Config.load({}, {}).service("i18n").adapter in ("", "embed")
    assert options.embed.dir == "" and options.embed.fallback == ""


def test_no_directory_means_every_key_is_missing() -> None:
    i18n = Container(Config.load({}, {})).i18n()
    assert i18n.adapter_name == "embed"
    assert i18n.t("greeting", locale="fr") == "greeting"
    assert i18n.locales() == []


def test_missing_directory_fails_at_open(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere-secret-path"
    with pytest.raises(InvalidOptionsError) as caught:
        open_embed(missing)
    assert "embed.dir" in str(caught.value)
    assert "nowhere-secret-path" not in str(caught.value)


def test_reads_every_locale_and_reloads(catalog_dir: Path) -> None:
    i18n = open_embed(catalog_dir, fallback="en")
    assert i18n.locales() == ["en", "fr", "fr_CA", "pl"]
    assert i18n.t("late", locale="de") == "late"
    write_catalogs(catalog_dir, {"de": (EN_PLURAL, {"late": "spät"})})
    assert i18n.t("late", locale="de") == "late"  # read at open, not per lookup
    i18n.reload()
    assert i18n.t("late", locale="de") == "spät"


def test_fallback_option_overrides_language_code(catalog_dir: Path) -> None:
    i18n = open_embed(catalog_dir, fallback="fr")
    assert i18n.t("greeting", locale="de") == "Bonjour"
    assert i18n.chain("de") == ["de", "fr"]


def test_missing_key_logged_once_at_debug(
    catalog_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolkit.i18n")
    i18n = open_embed(catalog_dir)
    for _ in range(3):
        i18n.t("nope", locale="fr")
    lines = [r for r in caplog.records if "no translation" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.DEBUG
