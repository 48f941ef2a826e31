"""One contract, both adapters: lookups, locale chain, missing keys, plurals, interpolation."""

from __future__ import annotations

from django.utils import translation

from tests.support.batteries import assert_opened_as
from toolkit_batteries.i18n import I18n

from .conftest import Opened


class TestI18nContract:
    def test_is_the_service(self, opened: Opened) -> None:
        assert_opened_as(opened.i18n, I18n, opened.variant, opened.container, "i18n")

    def test_explicit_locale(self, opened: Opened) -> None:
        assert opened.i18n.t("greeting", locale="fr") == "Bonjour"
        assert opened.i18n.t("greeting", locale="en") == "Hello"

    def test_active_django_language(self, opened: Opened) -> None:
        with translation.override("fr"):
            assert opened.i18n.t("greeting") == "Bonjour"
        with translation.override("fr-ca"):
            assert opened.i18n.t("greeting") == "Allô"

    def test_locale_spelling_is_normalized(self, opened: Opened) -> None:
        assert opened.i18n.t("greeting", locale="fr-ca") == "Allô"
        assert opened.i18n.t("greeting", locale="fr_CA") == "Allô"

    def test_region_falls_back_to_language(self, opened: Opened) -> None:
        assert opened.i18n.t("welcome", locale="fr-ca", name="Ana") == "Bienvenue, Ana !"

    def test_unknown_locale_falls_back_to_fallback_locale(self, opened: Opened) -> None:
        assert opened.i18n.t("greeting", locale="de") == "Hello"
        assert opened.i18n.t("only_en", locale="fr") == "English only"
        assert opened.i18n.chain("de_AT")[:2] == ["de_AT", "de"]
        assert opened.i18n.chain("de_AT")[-1] == "en"

    def test_missing_key(self, opened: Opened) -> None:
        i18n = opened.i18n
        assert i18n.t("no.such.key", locale="fr") == "no.such.key"
        assert i18n.t("no.such.key", locale="fr", default="Défaut") == "Défaut"
        assert i18n.t("no.such.key", locale="fr", default="Hi %(n)s", n=1) == "Hi 1"
        assert i18n.get("no.such.key", locale="fr") is None
        assert i18n.has("no.such.key", locale="fr") is False
        assert i18n.has("greeting", locale="fr") is True

    def test_plural_forms_follow_the_catalog_rule(self, opened: Opened) -> None:
        t = opened.i18n.t
        assert t("apple", locale="en", count=1) == "1 apple"
        assert t("apple", locale="en", count=0) == "0 apples"
        assert t("apple", locale="fr", count=0) == "0 pomme"  # French: 0 is singular
        assert t("apple", locale="fr", count=2) == "2 pommes"
        assert [t("apple", locale="pl", count=n) for n in (1, 3, 5, 22)] == [
            "1 jabłko",
            "3 jabłka",
            "5 jabłek",
            "22 jabłka",
        ]

    def test_interpolation_cannot_inject(self, opened: Opened) -> None:
        t = opened.i18n.t
        # A value is substituted once, never read as a template itself.
        assert t("welcome", locale="en", name="%(name)s %%") == "Welcome, %(name)s %%!"
        # Format-string syntax in a translation is plain text: no attribute access.
        assert t("braces", locale="en", name="x") == "Value {0.__class__} and {name!r}"
        assert t("discount", locale="fr", value=10) == "10 % de remise"
        # A placeholder without a value stays as it is.
        assert t("welcome", locale="en") == "Welcome, %(name)s!"
