"""The one decoder for settings beside ``TOOLKIT``: strict keys, layers, env, redaction."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings

from toolkit_batteries.core.options import Duration, option, options_class
from toolkit_batteries.core.sidesettings import (
    DECLARED,
    SideSetting,
    SideSettingError,
    read_side_setting,
)

SECRET = "pw-s3cret-value"


@options_class
class Inner:
    size: int = option(3, min=1, doc="a bounded number")


@options_class
class Things:
    mode: str = option("fast", choices=("fast", "slow"), doc="a choice")
    enabled: bool = option(True, doc="on by default")
    url: str = option("", secret=True, doc="carries a password")
    wait: Duration = option(timedelta(seconds=5), doc="a duration")
    names: tuple[str, ...] = option([], doc="a list")
    inner: Inner = option(None, doc="nested")


@options_class
class Rule:
    prefix: str = option("", doc="required")
    cost: int = option(1, min=1, doc="bounded")
    fail_open: bool = option(True, doc="on by default")


THINGS = SideSetting("TEST_SIDE_THINGS", Things)
RULES = SideSetting("TEST_SIDE_RULES", tuple[Rule, ...], default=(), required=("prefix",))
MODULES = SideSetting("TEST_SIDE_MODULES", tuple[str, ...], default=())
LABEL = SideSetting("TEST_SIDE_LABEL", str, default="api")
STORES = SideSetting("TEST_SIDE_STORES", dict[str, str], shorthand=lambda value: {"*": value})


def test_a_mapping_setting_layers_default_setting_then_environment():
    default = read_side_setting(THINGS, None, {})
    assert (default.mode, default.enabled, default.inner.size) == ("fast", True, 3)
    env = {"TEST_SIDE_THINGS__MODE": "slow", "TEST_SIDE_THINGS__INNER_SIZE": "7", "OTHER": "x"}
    got = read_side_setting(THINGS, {"wait": "250ms", "names": ["a"], "mode": "fast"}, env)
    assert got.mode == "slow" and got.wait == timedelta(milliseconds=250)
    assert got.names == ("a",) and got.inner.size == 7
    # an empty variable is ignored; a stray key of the prefix too (best effort)
    assert read_side_setting(THINGS, {}, {"TEST_SIDE_THINGS__MODE": ""}).mode == "fast"
    assert read_side_setting(THINGS, {}, {"TEST_SIDE_THINGS__NOPE": "1"}) == default


def test_a_given_zero_value_is_used_not_replaced_by_the_default():
    assert read_side_setting(THINGS, {"enabled": False}, {}).enabled is False
    assert read_side_setting(THINGS, {}, {"TEST_SIDE_THINGS__ENABLED": "false"}).enabled is False
    (rule,) = read_side_setting(RULES, [{"prefix": "/a", "fail_open": False}], {})
    assert rule.fail_open is False and rule.cost == 1
    # an empty string or list still means "unset", as in TOOLKIT
    assert read_side_setting(THINGS, {"mode": "", "names": []}, {}).mode == "fast"
    assert read_side_setting(LABEL, "", {}) == "api"


def test_an_unknown_key_names_the_setting_with_a_did_you_mean():
    with pytest.raises(
        SideSettingError, match=r'TEST_SIDE_THINGS: unknown keys mdoe \(did you mean "mode"\?\)'
    ):
        read_side_setting(THINGS, {"mdoe": "slow"}, {})
    with pytest.raises(
        SideSettingError, match=r'unknown keys inner.sise \(did you mean "inner.size"\?\)'
    ):
        read_side_setting(THINGS, {"inner": {"sise": 2}}, {})
    with pytest.raises(SideSettingError, match=r"TEST_SIDE_RULES\[1\]: unknown keys cots"):
        read_side_setting(RULES, [{"prefix": "/a"}, {"prefix": "/b", "cots": 2}], {})


def test_errors_name_the_key_and_the_variable_never_the_value():
    with pytest.raises(SideSettingError) as caught:
        read_side_setting(THINGS, {"enabled": SECRET}, {})
    assert str(caught.value) == 'TEST_SIDE_THINGS: "enabled" must be a boolean (true/false)'
    with pytest.raises(SideSettingError) as caught:
        read_side_setting(THINGS, {}, {"TEST_SIDE_THINGS__WAIT": SECRET})
    assert "TEST_SIDE_THINGS__WAIT" in str(caught.value) and SECRET not in str(caught.value)
    assert caught.value.key == "wait"
    with pytest.raises(SideSettingError, match='"mode" must be one of: fast, slow'):
        read_side_setting(THINGS, {"mode": SECRET}, {})
    with pytest.raises(SideSettingError, match=r'"inner.size" must be at least 1'):
        read_side_setting(THINGS, {"inner": {"size": -4}}, {})
    with pytest.raises(SideSettingError, match=r'TEST_SIDE_RULES\[0\]: "cost" must be at least 1'):
        read_side_setting(RULES, [{"prefix": "/a", "cost": -1}], {})
    with pytest.raises(SideSettingError, match="TEST_SIDE_THINGS: must be a dict"):
        read_side_setting(THINGS, [SECRET], {})
    assert SECRET not in repr(read_side_setting(THINGS, {"url": f"amqp://u:{SECRET}@h//"}, {}))


def test_required_keys_of_list_items():
    with pytest.raises(SideSettingError, match=r'TEST_SIDE_RULES\[0\]: needs a "prefix"'):
        read_side_setting(RULES, [{"cost": 2}], {})
    with pytest.raises(SideSettingError, match=r"TEST_SIDE_RULES\[0\]: must be a dict"):
        read_side_setting(RULES, ["/a"], {})


def test_list_and_single_value_settings_are_replaced_whole_by_the_variable():
    assert read_side_setting(MODULES, None, {}) == ()
    assert read_side_setting(MODULES, ["a.b"], {}) == ("a.b",)
    assert read_side_setting(MODULES, ["a.b"], {"TEST_SIDE_MODULES": "c.d, e.f"}) == ("c.d", "e.f")
    assert read_side_setting(MODULES, [], {"test_side_modules": '["x.y"]'}) == ("x.y",)
    with pytest.raises(SideSettingError, match="TEST_SIDE_MODULES: must be a list of strings"):
        read_side_setting(MODULES, "a.b", {})  # a missing comma, not a one-item list
    assert read_side_setting(LABEL, None, {}) == "api"
    assert read_side_setting(LABEL, "shop", {}) == "shop"
    assert read_side_setting(LABEL, "shop", {"TEST_SIDE_LABEL": "books"}) == "books"
    rules = read_side_setting(RULES, [], {"TEST_SIDE_RULES": '[{"prefix": "/x", "cost": 2}]'})
    assert [(r.prefix, r.cost) for r in rules] == [("/x", 2)]
    with pytest.raises(
        SideSettingError, match=r"TEST_SIDE_RULES: must be JSON \(from TEST_SIDE_RULES\)"
    ):
        read_side_setting(RULES, [], {"TEST_SIDE_RULES": "/x"})


def test_a_mapping_of_entries_with_a_shorthand_and_entry_variables():
    assert read_side_setting(STORES, None, {}) is None
    assert read_side_setting(STORES, "cache", {}) == {"*": "cache"}
    env = {"TEST_SIDE_STORES__PARTNERS": "memory"}
    assert read_side_setting(STORES, "cache", env) == {"*": "cache", "partners": "memory"}
    assert read_side_setting(STORES, None, env) == {"partners": "memory"}
    with pytest.raises(SideSettingError, match="TEST_SIDE_STORES: must be a string") as caught:
        read_side_setting(STORES, {"default": 42}, {})
    assert "42" not in str(caught.value)


def test_the_django_setting_is_read_when_no_value_is_passed():
    with override_settings(TEST_SIDE_LABEL="shop"):
        assert read_side_setting(LABEL, environ={}) == "shop"
    assert read_side_setting(LABEL, environ={}) == "api"


def test_a_battery_keeps_its_own_error_type():
    class JobsError(SideSettingError):
        pass

    spec = SideSetting("TEST_SIDE_OWN", Things, error=JobsError)
    with pytest.raises(JobsError, match="TEST_SIDE_OWN"):
        read_side_setting(spec, {"nope": 1}, {})


def test_every_battery_side_setting_is_declared_and_documented():
    """Each setting beside TOOLKIT is declared with the decoder and has a row on the page."""
    from pathlib import Path

    import toolkit_batteries.api_runtime.settings
    import toolkit_batteries.auth.revocation
    import toolkit_batteries.permission.denial
    import toolkit_batteries.queue.jobs.settings
    import toolkit_batteries.ratelimit.middleware
    import toolkit_batteries.scheduler.discovery  # noqa: F401

    page = (Path(__file__).parents[2] / "docs" / "settings.md").read_text(encoding="utf-8")
    battery = {name for name in DECLARED if not name.startswith("TEST_SIDE_")}
    assert battery == {
        "TOOLKIT_JOBS",
        "TOOLKIT_AUTH_REVOCATION",
        "TOOLKIT_RATELIMIT_RULES",
        "TOOLKIT_SCHEDULES",
        "TOOLKIT_CODEGEN_APP",
        "TOOLKIT_PERMISSION_DENIED_STATUS",
    }
    for name in battery:
        assert f"`{name}`" in page and DECLARED[name].env_form in page


def test_each_battery_reader_takes_the_environment_overlay(monkeypatch):
    """The converted readers go through the decoder, so each one honours its variables."""
    from toolkit_batteries.api_runtime.settings import codegen_app_label
    from toolkit_batteries.auth.revocation import REVOCATION
    from toolkit_batteries.queue.jobs.settings import load_jobs_settings
    from toolkit_batteries.ratelimit.middleware import RateLimitMiddleware
    from toolkit_batteries.scheduler.discovery import schedule_modules

    monkeypatch.setenv("TOOLKIT_CODEGEN_APP", "shop")
    assert codegen_app_label() == "shop" and codegen_app_label("books") == "books"
    monkeypatch.setenv("TOOLKIT_SCHEDULES", "tests.batteries.scheduler.schedules_fixture")
    assert "tests.batteries.scheduler.schedules_fixture" in schedule_modules()
    monkeypatch.setenv("TOOLKIT_AUTH_REVOCATION__PARTNERS", "memory")
    with override_settings(TOOLKIT_AUTH_REVOCATION="cache"):
        assert read_side_setting(REVOCATION) == {"*": "cache", "partners": "memory"}
    monkeypatch.setenv("TOOLKIT_JOBS__AUTODISCOVER", "off")
    assert load_jobs_settings({"autodiscover": True}).autodiscover is False
    monkeypatch.setenv("TOOLKIT_RATELIMIT_RULES", '[{"prefix": "/env/", "cost": 2}]')
    with override_settings(TOOLKIT_RATELIMIT_RULES=[{"prefix": "/settings/"}]):
        middleware = RateLimitMiddleware(lambda request: None)
    assert [prefix for prefix, _, _ in middleware._rules] == ["/env/"]
    monkeypatch.setenv("TOOLKIT_RATELIMIT_RULES", '[{"prefx": "/env/"}]')
    with pytest.raises(SideSettingError, match=r"unknown keys prefx .*TOOLKIT_RATELIMIT_RULES\)"):
        RateLimitMiddleware(lambda request: None)
