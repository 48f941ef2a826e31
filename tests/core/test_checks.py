"""System checks: toolkit_batteries.E001 and the batteries' toolkit_<service>.E001."""

from __future__ import annotations

import sys

import pytest
from django.apps import apps
from django.core import checks
from django.core.checks.registry import CheckRegistry
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import override_settings

from tests.core import fakes
from tests.core.fakes import fake_module, no_batteries, path  # noqa: F401 - fixture
from toolkit_batteries.core import loading
from toolkit_batteries.core.apps import BatteryConfig, ToolkitBatteriesConfig
from toolkit_batteries.core.checks import check_configuration

SECRET = "s3cr3t-Value-never-shown"


def core_errors() -> list[checks.CheckMessage]:
    return [m for m in checks.run_checks(tags=["toolkit"]) if m.id == "toolkit_batteries.E001"]


# ------------------------------------------------------------------ the core app


def test_core_app_is_installed_under_its_label() -> None:
    config = apps.get_app_config("toolkit_batteries")
    assert isinstance(config, ToolkitBatteriesConfig)
    assert config.name == "toolkit_batteries"


def test_ready_registered_the_configuration_check() -> None:
    assert check_configuration in checks.registry.registry.get_checks()
    assert "toolkit" in check_configuration.tags


def test_valid_configuration_reports_nothing() -> None:
    with override_settings(TOOLKIT={"cache": {"adapter": "memory", "options": {"max_entries": 5}}}):
        assert core_errors() == []


def test_every_invalid_service_is_reported_without_values() -> None:
    toolkit = {
        "cache": {"options": {"max_entries": SECRET}},
        "db": {"options": {"bogus": SECRET}},
        "mailer": {"options": {"port": SECRET, "password": SECRET}},
    }
    with override_settings(TOOLKIT=toolkit):
        errors = core_errors()
    assert len(errors) == 3
    assert all(isinstance(e, checks.Error) for e in errors)
    text = "\n".join(str(e) for e in errors)
    assert SECRET not in text
    assert '"max_entries"' in text and '"bogus"' in text and '"port"' in text
    assert [e.msg.split(":")[0] for e in errors] == [
        "cache.default",
        "db.default",
        "mailer.default",
    ]


def test_unknown_service_suggests_the_right_one() -> None:
    with override_settings(TOOLKIT={"cahce": {}}):
        (error,) = core_errors()
    assert 'unknown service "cahce" (did you mean "cache"?)' in error.msg


def test_environment_problems_are_reported_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CACHE__DEFAULT__MAX_ENTRIES", SECRET)
    (error,) = core_errors()
    assert "CACHE__DEFAULT__MAX_ENTRIES" in error.msg
    assert SECRET not in error.msg


def test_check_command_fails_on_an_invalid_configuration() -> None:
    toolkit = {"cache": {"options": {"max_entries": SECRET}}}
    with override_settings(TOOLKIT=toolkit), pytest.raises(SystemCheckError) as caught:
        call_command("check", tag=["toolkit"])
    assert "toolkit_batteries.E001" in str(caught.value)
    assert SECRET not in str(caught.value)


# ------------------------------------------------------------------ BatteryConfig


class GeoConfig(BatteryConfig):
    name = "toolkit_batteries.geo"

    seen: list[object] = []

    def battery_checks(self, config):  # the battery-specific hook
        self.seen.append(config)
        return [checks.Warning("geo hook ran", id="toolkit_geo.W001")]


class ExplicitConfig(BatteryConfig):
    name = "toolkit_batteries.cache"
    label = "toolkit_cache_custom"
    verbose_name = "Cache!"


def test_battery_config_derives_service_label_and_verbose_name() -> None:
    assert (GeoConfig.service, GeoConfig.label, GeoConfig.verbose_name) == (
        "geo",
        "toolkit_geo",
        "toolkit: geo",
    )
    assert (ExplicitConfig.label, ExplicitConfig.verbose_name) == ("toolkit_cache_custom", "Cache!")
    assert BatteryConfig.default is False  # never picked as an app by itself
    assert GeoConfig.default is True


@pytest.fixture
def geo_checks(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> CheckRegistry:
    """Run GeoConfig.ready() against a private check registry."""
    request.getfixturevalue("no_batteries")
    registry = CheckRegistry()
    monkeypatch.setattr(checks, "register", registry.register)
    adapters = "toolkit_batteries.geo.adapters"
    monkeypatch.setitem(
        sys.modules,
        adapters,
        fake_module(adapters, ADAPTERS={"static": path("RecordingAdapter")}),
    )
    loading.clear_cache()
    GeoConfig.seen.clear()
    config = GeoConfig("toolkit_batteries.geo", fakes)
    config.ready()
    monkeypatch.setattr(registry, "app_config", config, raising=False)
    return registry


def geo_messages(registry: CheckRegistry, **kwargs) -> list[checks.CheckMessage]:
    return registry.run_checks(tags=["toolkit"], **kwargs)


def test_battery_check_passes_when_every_adapter_resolves(geo_checks: CheckRegistry) -> None:
    with override_settings(TOOLKIT={"geo": {"primary": {"adapter": "STATIC"}}}):
        messages = geo_messages(geo_checks)
    assert [m.id for m in messages] == ["toolkit_geo.W001"]
    (config,) = GeoConfig.seen
    assert config.instances("geo") == ("default", "primary")


def test_battery_check_reports_each_unresolvable_instance(geo_checks: CheckRegistry) -> None:
    toolkit = {"geo": {"default": {"adapter": "statik"}, "backup": {"adapter": "tests.nope.X"}}}
    with override_settings(TOOLKIT=toolkit):
        messages = geo_messages(geo_checks)
    errors = [m for m in messages if m.id == "toolkit_geo.E001"]
    assert [e.msg.split(":")[0] for e in errors] == ["geo.default", "geo.backup"]
    assert 'did you mean "static"' in errors[0].msg


def test_battery_check_reports_a_missing_extra(geo_checks: CheckRegistry) -> None:
    with override_settings(TOOLKIT={"geo": {"adapter": "tests.core.fakes_extra.Geo"}}):
        (error, _hook) = geo_messages(geo_checks)
    assert error.id == "toolkit_geo.E001"
    assert 'pip install "django-toolkit[geo]"' in error.msg


def test_battery_check_leaves_option_errors_to_the_core_check(
    geo_checks: CheckRegistry,
) -> None:
    with override_settings(TOOLKIT={"geo": {"options": {"bogus": 1}}, "cache": {"adapter": "x"}}):
        assert geo_messages(geo_checks) == []


def test_battery_check_ignores_other_services_broken_blocks(geo_checks: CheckRegistry) -> None:
    with override_settings(TOOLKIT={"cache": {"options": {"bogus": 1}}}):
        assert [m.id for m in geo_messages(geo_checks)] == ["toolkit_geo.W001"]


def test_battery_check_honours_the_app_list(geo_checks: CheckRegistry) -> None:
    other = apps.get_app_config("toolkit_batteries")
    with override_settings(TOOLKIT={"geo": {"adapter": "statik"}}):
        assert geo_messages(geo_checks, app_configs=[other]) == []
        assert geo_messages(geo_checks, app_configs=[geo_checks.app_config]) != []


def test_overriding_installed_apps_does_not_duplicate_battery_checks() -> None:
    """``ready()`` runs again on every INSTALLED_APPS override; checks must not pile up."""
    from django.conf import settings
    from django.core import checks
    from django.test import override_settings

    def count() -> int:
        return len(checks.registry.registry.registered_checks)

    before = count()
    for _ in range(3):
        with override_settings(INSTALLED_APPS=list(settings.INSTALLED_APPS)):
            assert count() == before
    assert count() == before


def test_battery_checks_still_run_after_an_installed_apps_override_is_restored() -> None:
    # Restoring the override brings back the earlier AppConfig objects without running
    # ready() again; the lock battery's check must still answer for its app.
    with override_settings(INSTALLED_APPS=[*settings_installed_apps(), "tests.core"]):
        pass
    app = apps.get_app_config("toolkit_lock")
    with override_settings(TOOLKIT={"lock": {"options": {"ttl": "-1s"}}}):
        found = [m.id for m in checks.run_checks(app_configs=[app])]
    assert "toolkit_lock.E003" in found


def settings_installed_apps() -> list[str]:
    from django.conf import settings

    return list(settings.INSTALLED_APPS)
