"""Plugins: strict envelopes around raw options; the environment may set only the adapter."""

from __future__ import annotations

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import (
    ConfigurationError,
    UnknownInstanceError,
    UnknownServiceError,
)


def load(settings, environ=None) -> Config:
    return Config.load(settings, environ or {})


def test_plugin_envelope_is_the_default_instance():
    config = load({"plugins": {"sms_gateway": {"adapter": "acme", "options": {"sender": "Me"}}}})
    assert config.plugin_names() == ("sms_gateway",)
    plugin = config.plugin("sms_gateway")
    assert (plugin.name, plugin.instance, plugin.adapter) == ("sms_gateway", "default", "acme")
    assert dict(plugin.options) == {"sender": "Me"}


def test_plugin_instances_map():
    config = load(
        {
            "plugins": {
                "sms_gateway": {
                    "default": {"adapter": "acme"},
                    "backup": {"adapter": "other", "options": {"region": "eu"}},
                }
            }
        }
    )
    assert config.plugin("sms_gateway").adapter == "acme"
    assert config.plugin("sms_gateway").options == {}
    assert config.plugin("sms_gateway", "backup").options["region"] == "eu"


def test_plugin_options_are_a_read_only_deep_copy():
    raw = {"limits": {"per_day": 100}, "numbers": ["+1"]}
    config = load({"plugins": {"sms": {"adapter": "acme", "options": raw}}})
    raw["limits"]["per_day"] = 1
    raw["numbers"].append("+2")
    options = config.plugin("sms").options
    assert options["limits"]["per_day"] == 100
    assert list(options["numbers"]) == ["+1"]
    with pytest.raises(TypeError):
        options["limits"] = {}  # type: ignore[index]
    with pytest.raises(TypeError):
        options["limits"]["per_day"] = 5  # type: ignore[index]


def test_plugin_options_pass_through_raw():
    raw = {"AnyKey": 1, "nested": {"Whatever": [1, 2]}, "flag": True}
    config = load({"plugins": {"sms": {"adapter": "acme", "options": raw}}})
    options = config.plugin("sms").options
    assert options["AnyKey"] == 1 and options["flag"] is True
    assert list(options["nested"]["Whatever"]) == [1, 2]


@pytest.mark.parametrize(
    ("block", "fragment"),
    [
        ({"adapter": "acme", "optoins": {}}, 'unknown key "optoins" (did you mean "options"?)'),
        ({"adapter": "acme", "settings": {}}, 'unknown key "settings"'),
        ({"options": {}}, '"adapter" is required'),
        ({"adapter": ""}, '"adapter" is required'),
        ({"adapter": "  "}, '"adapter" is required'),
        ({"adapter": 3}, '"adapter" must be a string'),
        ({"adapter": "acme", "options": ["a"]}, '"options" must be a mapping'),
        ({}, '"adapter" is required'),
        ({"backup": {"adapter": "acme", "extra": 1}}, 'unknown key "extra"'),
    ],
)
def test_plugin_envelope_is_strict(block, fragment):
    with pytest.raises(ConfigurationError) as info:
        load({"plugins": {"sms_gateway": block}})
    assert "plugins.sms_gateway" in str(info.value)
    assert fragment in str(info.value)


def test_plugin_named_like_a_service_fails():
    with pytest.raises(ConfigurationError, match="built-in service"):
        load({"plugins": {"cache": {"adapter": "acme"}}})
    with pytest.raises(ConfigurationError, match="built-in service"):
        load({"plugins": {"Rate_Limit": {"adapter": "acme"}}})


def test_plugins_must_be_a_mapping():
    with pytest.raises(ConfigurationError, match="plugins"):
        load({"plugins": ["sms"]})


def test_environment_overrides_only_the_plugin_adapter():
    config = load(
        {"plugins": {"sms_gateway": {"adapter": "acme", "options": {"sender": "Me"}}}},
        {
            "SMS_GATEWAY__DEFAULT__ADAPTER": "other",
            "SMS_GATEWAY__DEFAULT__SENDER": "You",
            "SMS_GATEWAY_ADAPTER": "legacy-ignored",
        },
    )
    plugin = config.plugin("sms_gateway")
    assert plugin.adapter == "other"
    assert dict(plugin.options) == {"sender": "Me"}


def test_environment_adapter_can_supply_a_missing_plugin_adapter_and_new_instance():
    config = load(
        {"plugins": {"sms": {"options": {"k": 1}}}},
        {"SMS__DEFAULT__ADAPTER": "acme", "sms__Backup__adapter": "other"},
    )
    assert config.plugin("sms").adapter == "acme"
    assert config.plugin("sms", "backup").adapter == "other"
    assert config.plugin("sms", "backup").options == {}


def test_environment_cannot_create_an_undeclared_plugin():
    config = load({}, {"SMS__DEFAULT__ADAPTER": "acme"})
    assert config.plugin_names() == ()
    with pytest.raises(UnknownServiceError):
        config.plugin("sms")


def test_plugin_lookup_errors():
    config = load({"plugins": {"sms": {"adapter": "acme"}}})
    with pytest.raises(UnknownServiceError, match='did you mean "sms"'):
        config.plugin("smss")
    with pytest.raises(UnknownInstanceError):
        config.plugin("sms", "backup")


def test_validate_reports_every_bad_plugin():
    problems = Config.validate(
        {
            "plugins": {
                "b": {"adapter": ""},
                "a": {"adapter": "x", "extra": 1},
                "ok": {"adapter": "y"},
            }
        },
        {},
    )
    assert [str(p).split(":")[0] for p in problems] == ["plugins.a.default", "plugins.b.default"]
