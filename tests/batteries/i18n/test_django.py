"""The embed catalogs and Django's translation machinery agree; the checks; the settings bridge."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.template import engines
from django.test import override_settings
from django.utils import translation

from toolkit_batteries import services
from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config
from toolkit_batteries.i18n import i18n_locale_paths

from .conftest import embed_block

TEMPLATE = (
    "{% load i18n %}{% translate 'greeting' %}|"
    "{% blocktranslate count count=n %}{{ count }} apple{% plural %}{{ count }} apples"
    "{% endblocktranslate %}"
)


@pytest.fixture
def django_catalogs(catalog_dir: Path):
    toolkit = {"i18n": embed_block(catalog_dir, fallback="en")}
    with override_settings(TOOLKIT=toolkit, LOCALE_PATHS=i18n_locale_paths(toolkit)):
        yield catalog_dir


def test_locale_paths_bridge(catalog_dir: Path, tmp_path: Path) -> None:
    toolkit = {
        "i18n": {
            "default": embed_block(catalog_dir),
            "other": {"adapter": "remote", "options": {"remote": {"endpoint": "https://x.test"}}},
        }
    }
    assert i18n_locale_paths(toolkit) == [str(catalog_dir.resolve())]
    assert i18n_locale_paths({}) == []


@pytest.mark.parametrize("locale", ["fr", "fr-ca", "en", "pl"])
def test_service_gettext_and_template_agree(django_catalogs: Path, locale: str) -> None:
    i18n = services.i18n()
    template = engines["django"].from_string(TEMPLATE)
    with translation.override(locale):
        assert i18n.t("greeting") == translation.gettext("greeting")
        for n in (0, 1, 2, 5):
            ours = i18n.t("apple", count=n)
            django = translation.ngettext("apple", "apples", n) % {"count": n}
            assert ours == django
        rendered = template.render({"n": 3}).split("|")
    assert rendered[0] == i18n.t("greeting", locale=locale)
    assert rendered[1] == i18n.t("%(count)s apple", locale=locale, count=3)


def test_override_picks_the_language_of_both(django_catalogs: Path) -> None:
    with translation.override("fr"):
        assert services.i18n().t("greeting") == "Bonjour" == translation.gettext("greeting")
    with translation.override("fr-ca"):
        assert services.i18n().t("greeting") == "Allô" == translation.gettext("greeting")


def _ids(toolkit, **settings) -> list[str]:
    with override_settings(**settings):
        return [m.id for m in service_checks("i18n", Config.load(toolkit, {}))]


def test_checks(catalog_dir: Path, tmp_path: Path) -> None:
    toolkit = {"i18n": embed_block(catalog_dir)}
    assert _ids(toolkit, LOCALE_PATHS=[str(catalog_dir)]) == []
    assert _ids(toolkit, LOCALE_PATHS=[]) == ["toolkit_i18n.W001"]
    assert _ids({"i18n": embed_block(tmp_path / "missing")}) == ["toolkit_i18n.E002"]
    remote = {"adapter": "remote", "options": {"remote": {"endpoint": "http://example.com"}}}
    assert _ids({"i18n": remote}) == ["toolkit_i18n.E003"]
    assert _ids({"i18n": {"adapter": "remote"}}) == ["toolkit_i18n.E003"]
    remote["options"]["remote"].update(endpoint="https://example.com", max_in_flight=-1)
    assert _ids({"i18n": remote}) == ["toolkit_i18n.E004"]
    remote["options"]["remote"].update(max_in_flight=5)
    assert _ids({"i18n": remote}) == []
