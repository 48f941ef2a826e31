"""Configuration layers, settings shapes and the Config API."""

from __future__ import annotations

from datetime import timedelta

import pytest

from toolkit_batteries.core.catalog import SERVICES, options_class_of
from toolkit_batteries.core.config import Config, ServiceConfig
from toolkit_batteries.core.errors import (
    ConfigurationError,
    DispatcherRequiredError,
    InvalidOptionsError,
    UnknownFieldError,
    UnknownInstanceError,
    UnknownServiceError,
)
from toolkit_batteries.core.options import Where, build_options


def load(settings=None, environ=None) -> Config:
    return Config.load(settings, environ if environ is not None else {})


# --------------------------------------------------------------------------- layers


def test_defaults_give_every_service_a_default_instance_with_catalog_adapter():
    config = load()
    assert set(config.services) == set(SERVICES)
    for name, spec in SERVICES.items():
        resolved = config.service(name)
        assert resolved.instance == "default"
        assert resolved.adapter == spec.default_adapter
        cls = options_class_of(name)
        assert resolved.options == build_options(cls, {}, Where(name))
        assert config.instances(name) == ("default",)


def test_settings_override_defaults():
    config = load({"cache": {"adapter": "kvserver", "options": {"max_entries": 5000}}})
    cache = config.service("cache")
    assert cache.adapter == "kvserver"
    assert cache.options.max_entries == 5000
    assert cache.options.sweep_interval == timedelta(minutes=1)  # untouched default


@pytest.mark.parametrize(
    ("entries", "adapter", "expected"),
    [("7", "db", (7, "db")), ("0", "", (1000, "memory"))],
    ids=["environment-overrides-settings", "zero-from-environment-means-unset-so-default"],
)
def test_environment_overrides_settings(entries, adapter, expected):
    """A value from the environment wins; a zero or empty one means unset: the default."""
    config = load(
        {"cache": {"adapter": "kvserver", "options": {"max_entries": 5000}}},
        {"CACHE__DEFAULT__MAX_ENTRIES": entries, "CACHE__DEFAULT__ADAPTER": adapter},
    )
    cache = config.service("cache")
    assert (cache.options.max_entries, cache.adapter) == expected


def test_none_settings_is_empty_and_none_environ_is_os_environ(monkeypatch):
    monkeypatch.setenv("CACHE__DEFAULT__MAX_ENTRIES", "4321")
    config = Config.load()
    assert config.service("cache").options.max_entries == 4321
    assert config.service("cache").adapter == "memory"
    assert Config.load(None, {}).service("cache").options.max_entries == 1000


def test_environment_overlays_one_field_and_keeps_the_settings_block():
    config = load(
        {"mailer": {"adapter": "smtp", "options": {"host": "smtp.example", "port": 587}}},
        {"MAILER__DEFAULT__PORT": "2525"},
    )
    mailer = config.service("mailer")
    assert (mailer.adapter, mailer.options.host, mailer.options.port) == (
        "smtp",
        "smtp.example",
        2525,
    )


def test_nested_environment_field_keeps_sibling_settings():
    config = load(
        {"auth": {"options": {"jwt": {"issuer": "me", "audience": "you"}}}},
        {"AUTH__DEFAULT__JWT_AUDIENCE": "them"},
    )
    jwt = config.service("auth").options.jwt
    assert (jwt.issuer, jwt.audience) == ("me", "them")


def test_zero_in_settings_means_unset():
    config = load({"mailer": {"options": {"port": 0, "host": ""}}})
    assert (config.service("mailer").options.port, config.service("mailer").options.host) == (
        25,
        "localhost",
    )


# --------------------------------------------------------------------------- settings shapes


def test_envelope_configures_the_default_instance():
    config = load({"db": {"adapter": "sqlserver", "options": {"dsn": "postgresql://h/db"}}})
    assert config.instances("db") == ("default",)
    assert config.service("db").adapter == "sqlserver"
    assert config.service("db").options.dsn == "postgresql://h/db"


def test_instances_map_configures_several_instances():
    config = load(
        {
            "db": {
                "default": {"adapter": "sqlfile", "options": {"path": "db.sqlite3"}},
                "primary": {"adapter": "sqlserver", "options": {"dsn": "postgresql://h/p"}},
                "replica": {},
            }
        }
    )
    assert config.instances("db") == ("default", "primary", "replica")
    assert config.service("db").options.path == "db.sqlite3"
    assert config.service("db", "primary").adapter == "sqlserver"
    assert config.service("db", "replica").adapter == "sqlfile"
    assert config.service("db", "replica").options.path == ""


def test_instances_map_without_default_still_has_default():
    config = load({"db": {"primary": {"adapter": "sqlserver"}}})
    assert config.instances("db") == ("default", "primary")
    assert config.service("db").adapter == "sqlfile"


@pytest.mark.parametrize("block", [{}, None, {"adapter": None}, {"options": None}])
def test_empty_block_is_the_default_instance_with_defaults(block):
    config = load({"cache": block})
    assert config.instances("cache") == ("default",)
    assert config.service("cache").adapter == "memory"
    assert config.service("cache").options.max_entries == 1000


def test_envelope_keys_are_strict():
    with pytest.raises(UnknownFieldError) as info:
        load({"cache": {"adapter": "kvserver", "optoins": {}}})
    assert 'did you mean "options"' in str(info.value)
    assert info.value.service == "cache"


def test_instance_envelope_cannot_hold_option_keys_directly():
    with pytest.raises(UnknownFieldError) as info:
        load({"db": {"primary": {"dsn": "x"}}})
    assert "db.primary" in str(info.value)


def test_unknown_service_fails_with_did_you_mean():
    with pytest.raises(UnknownServiceError) as info:
        load({"cahce": {}})
    assert str(info.value) == 'unknown service "cahce" (did you mean "cache"?)'


def test_unknown_option_fails_with_did_you_mean():
    with pytest.raises(UnknownFieldError) as info:
        load({"cache": {"options": {"max_entires": 5}}})
    assert 'did you mean "max_entries"' in str(info.value)


def test_settings_keys_match_ignoring_case_and_underscores():
    config = load(
        {
            "Rate_Limit": {"Adapter": "kvserver"},
            "CACHE": {"ADAPTER": "kvserver", "Options": {"MaxEntries": 5, "SWEEP_INTERVAL": "5s"}},
        }
    )
    assert config.service("ratelimit").adapter == "kvserver"
    assert config.service("cache").options.max_entries == 5
    assert config.service("cache").options.sweep_interval == timedelta(seconds=5)


def test_a_service_given_twice_by_spelling_fails():
    with pytest.raises(ConfigurationError, match='"cache" is given twice'):
        load({"cache": {}, "CACHE": {}})


def test_non_string_adapter_in_settings_fails():
    with pytest.raises(InvalidOptionsError) as info:
        load({"cache": {"adapter": 5}})
    assert info.value.field == "adapter"


def test_non_mapping_block_fails():
    with pytest.raises(ConfigurationError, match="cache"):
        load({"cache": "kvserver"})


def test_options_class_validate_runs_after_building():
    rules = [{"role": "editor", "action": " ", "owned_only": True}]
    with pytest.raises(InvalidOptionsError) as info:
        load({"permission": {"adapter": "rbac", "options": {"rules": rules}}})
    assert info.value.field == "rules[0].action"
    rules[0]["action"] = "edit"  # owned_only alone is valid: the route's owner_field decides
    assert load({"permission": {"options": {"rules": rules}}}).service("permission").options.rules


# --------------------------------------------------------------------------- scheduler


@pytest.mark.parametrize(
    "block",
    [
        {"options": {"close_timeout": "10s"}},
        {"adapter": "sqlserver", "options": {}},
        {"options": None},
        {"default": {"adapter": "embedded"}, "jobs": {"options": {"dsn": "x"}}},
    ],
)
def test_scheduler_options_block_in_settings_is_rejected(block):
    with pytest.raises(DispatcherRequiredError) as info:
        load({"scheduler": block})
    assert info.value.code == "dispatcher_is_required"


def test_scheduler_adapter_from_settings_and_options_from_environment():
    config = load(
        {"scheduler": {"adapter": "sqlserver"}},
        {
            "SCHEDULER__DEFAULT__CLOSE_TIMEOUT": "10s",
            "SCHEDULER__DEFAULT__DSN": "postgresql://h/jobs",
            "SCHEDULER__DEFAULT__DEDICATED_POOL": "true",
        },
    )
    scheduler = config.service("scheduler")
    assert scheduler.adapter == "sqlserver"
    assert scheduler.options.close_timeout == timedelta(seconds=10)
    assert scheduler.options.dsn == "postgresql://h/jobs"
    assert scheduler.options.dedicated_pool is True


# --------------------------------------------------------------------------- API


def test_service_lookup_errors():
    config = load({"db": {"primary": {}}})
    with pytest.raises(UnknownServiceError, match='did you mean "cache"'):
        config.service("cahce")
    with pytest.raises(UnknownInstanceError, match='did you mean "primary"'):
        config.service("db", "primari")
    with pytest.raises(UnknownServiceError):
        config.instances("nope")


def test_service_lookup_is_lenient_about_spelling():
    config = load({"db": {"read_replica": {}}})
    assert config.service("RateLimit").service == "ratelimit"
    assert config.service("db", "ReadReplica").instance == "read_replica"


def test_services_mapping_is_read_only():
    config = load()
    assert isinstance(config.services["cache"]["default"], ServiceConfig)
    with pytest.raises(TypeError):
        config.services["cache"] = {}  # type: ignore[index]
    with pytest.raises(TypeError):
        config.services["cache"]["other"] = config.service("cache")  # type: ignore[index]
    with pytest.raises(AttributeError):
        config.service("cache").adapter = "kvserver"  # type: ignore[misc]


def test_loads_are_independent():
    first = load({"cache": {"options": {"max_entries": 5}}})
    second = load()
    assert first.service("cache").options.max_entries == 5
    assert second.service("cache").options.max_entries == 1000


# --------------------------------------------------------------------------- validate


def test_validate_returns_every_problem_sorted_and_load_raises_the_first():
    settings = {
        "zzz": {},
        "scheduler": {"options": {}},
        "db": {"primary": {"options": {"max_conns": "many"}}},
        "cache": {"options": {"max_entries": "lots"}},
        "plugins": {"sms": {"options": {}}},
    }
    environ = {"MAILER__DEFAULT__PORT": "not-a-port", "MAILER__DEFAULT__TIMEOUT": "soon"}
    problems = Config.validate(settings, environ)
    described = [(type(p).__name__, str(p).split(":")[0]) for p in problems]
    assert described == [
        ("InvalidOptionsError", "cache.default"),
        ("InvalidOptionsError", "db.primary"),
        ("InvalidOptionsError", "mailer.default"),  # one per failing instance
        ("ConfigurationError", "plugins.sms.default"),
        ("DispatcherRequiredError", "scheduler.default"),
        ("UnknownServiceError", 'unknown service "zzz"'),
    ]
    with pytest.raises(InvalidOptionsError) as info:
        Config.load(settings, environ)
    assert str(info.value) == str(problems[0])


def test_validate_of_a_good_configuration_is_empty():
    assert Config.validate({"cache": {"adapter": "kvserver"}}, {}) == []


def test_settings_must_be_a_mapping():
    problems = Config.validate(["cache"], {})  # type: ignore[arg-type]
    assert len(problems) == 1
    assert isinstance(problems[0], ConfigurationError)
