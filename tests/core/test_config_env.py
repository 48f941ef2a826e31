"""The environment layer: instance-aware and legacy names, best effort, strict values."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.env import read_environ
from toolkit_batteries.core.errors import InvalidOptionsError


def load(environ, settings=None) -> Config:
    return Config.load(settings, environ)


def test_spec_examples_set_their_fields():
    config = load(
        {
            "CACHE__DEFAULT__MAX_ENTRIES": "5000",
            "AUTH__DEFAULT__JWT_SECRET": "x" * 40,
            "EVENTBUS__DEFAULT__KVSERVER_ADDR": "redis.internal:6379",
            "RESILIENCE__DEFAULT__BREAKER_ENABLED": "true",
            "RESILIENCE__DEFAULT__RETRY_BASEDELAY": "250ms",
        }
    )
    assert config.service("cache").options.max_entries == 5000
    assert config.service("auth").options.jwt.secret == "x" * 40
    assert config.service("eventbus").options.kvserver.addr == "redis.internal:6379"
    resilience = config.service("resilience").options
    assert resilience.breaker.enabled is True
    assert resilience.retry is not None
    assert resilience.retry.base_delay == timedelta(milliseconds=250)
    assert resilience.retry.max_attempts == 3  # the rest of the policy keeps its defaults


def test_adapter_variable_sets_the_adapter():
    config = load({"CACHE__DEFAULT__ADAPTER": "kvserver", "QUEUE__WORKERS__ADAPTER": "db"})
    assert config.service("cache").adapter == "kvserver"
    assert config.service("queue", "workers").adapter == "db"


def test_matching_ignores_case_and_underscores():
    config = load(
        {
            "cache__Default__maxentries": "12",
            "RATE_LIMIT__DEFAULT__RATE": "7",
            "DB__READ_REPLICA__MAXCONNS": "4",
        },
        {"db": {"readreplica": {"adapter": "sqlserver"}}},
    )
    assert config.service("cache").options.max_entries == 12
    assert config.service("ratelimit").options.rate == 7
    assert config.instances("db") == ("default", "readreplica")
    assert config.service("db", "readreplica").options.max_conns == 4
    assert config.service("db", "readreplica").adapter == "sqlserver"


def test_environment_instance_not_in_settings_is_created_from_defaults():
    config = load({"DB__PRIMARY__DSN": "postgresql://h/primary"})
    assert config.instances("db") == ("default", "primary")
    primary = config.service("db", "primary")
    assert (primary.adapter, primary.options.dsn) == ("sqlfile", "postgresql://h/primary")
    assert config.service("db").options.dsn == ""


def test_unknown_field_does_not_create_an_instance():
    config = load({"DB__GHOST__NOPE": "1"})
    assert config.instances("db") == ("default",)


def test_unknown_names_are_ignored_silently(caplog):
    environ = {
        "PATH": "/usr/bin",
        "LC_ALL": "C",
        "NOPE__DEFAULT__X": "1",
        "CACHE__DEFAULT__NOT_A_FIELD": "1",
        "CACHE_NOT_A_FIELD": "1",
        "CACHE__MAX_ENTRIES": "oops",  # two parts: neither form
        "CACHE__DEFAULT__": "1",
        "__DEFAULT__X": "1",
        "DB": "1",
    }
    with caplog.at_level(logging.DEBUG, logger="toolkit"):
        config = load(environ)
    assert caplog.records == []
    assert config.service("cache").options.max_entries == 1000


def test_toolkit_prefixed_variables_are_never_configuration(caplog):
    environ = {
        "TOOLKIT_ENV": "production",
        "TOOLKIT_INTERACTIVE": "0",
        "TOOLKIT_NO_HINT": "1",
        "TOOLKIT_JSON": "1",
        "TOOLKIT_DB_MAX_CONNS": "not-a-number",  # a secret of the env secrets adapter
        "TOOLKIT_SMS__DEFAULT__ADAPTER": "acme",  # would address plugin "toolkit_sms"
    }
    settings = {"plugins": {"toolkit_sms": {"adapter": "base"}}}
    with caplog.at_level(logging.DEBUG, logger="toolkit"):
        config = load(environ, settings)
    assert caplog.records == []
    assert config.plugin("toolkit_sms").adapter == "base"
    assert config.service("db").options.max_conns == 0


def test_unparsable_value_names_service_instance_field_and_variable():
    with pytest.raises(InvalidOptionsError) as info:
        load({"CACHE__PRIMARY__MAX_ENTRIES": "many"})
    error = info.value
    assert (error.service, error.instance, error.field, error.source) == (
        "cache",
        "primary",
        "max_entries",
        "CACHE__PRIMARY__MAX_ENTRIES",
    )
    assert "many" not in str(error)


def test_out_of_range_value_from_environment_names_the_variable():
    with pytest.raises(InvalidOptionsError) as info:
        load({"MAILER__DEFAULT__PORT": "70000"}, {"mailer": {"options": {"host": "h"}}})
    assert info.value.source == "MAILER__DEFAULT__PORT"
    assert "70000" not in str(info.value)


def test_out_of_range_value_from_settings_names_settings():
    with pytest.raises(InvalidOptionsError) as info:
        load({}, {"mailer": {"options": {"port": 70000}}})
    assert info.value.source == "settings.TOOLKIT"


def test_list_and_map_fields_parse_from_text():
    config = load(
        {
            "CRYPTO__DEFAULT__KEY_IDS": "k1,k2",
            "OBSERVABILITY__DEFAULT__HEADERS": '{"x-team": "core"}',
        }
    )
    assert config.service("crypto").options.key_ids == ("k1", "k2")
    assert config.service("observability").options.headers == {"x-team": "core"}


# --------------------------------------------------------------------------- legacy


def test_legacy_flat_form_sets_the_default_instance_and_warns_once_per_variable(caplog):
    environ = {
        "DB_MAX_CONNS": "20",
        "AUTH_JWT_SECRET": "legacy-secret-value-xxxxxxxxxxxxxxxxx",
        "DB_ADAPTER": "sqlserver",
    }
    with caplog.at_level(logging.WARNING, logger="toolkit.config"):
        config = load(environ, {"db": {"primary": {}}})
    assert config.service("db").options.max_conns == 20
    assert config.service("db").adapter == "sqlserver"
    assert config.service("db", "primary").options.max_conns == 0
    assert config.service("auth").options.jwt.secret == environ["AUTH_JWT_SECRET"]
    messages = [r.getMessage() for r in caplog.records if r.name == "toolkit.config"]
    assert len(messages) == 3
    assert all(r.levelno == logging.WARNING for r in caplog.records)
    joined = "\n".join(messages)
    for variable, replacement in (
        ("DB_MAX_CONNS", "DB__DEFAULT__MAX_CONNS"),
        ("AUTH_JWT_SECRET", "AUTH__DEFAULT__JWT_SECRET"),
        ("DB_ADAPTER", "DB__DEFAULT__ADAPTER"),
    ):
        assert any(variable in m and replacement in m for m in messages)
    assert environ["AUTH_JWT_SECRET"] not in joined
    assert "sqlserver" not in joined


def test_instance_aware_form_wins_over_legacy():
    environ = {
        "DB_MAX_CONNS": "20",
        "DB__DEFAULT__MAX_CONNS": "30",
        "DB_ADAPTER": "sqlserver",
        "DB__DEFAULT__ADAPTER": "sqlfile",
        "DB_MIN_CONNS": "2",
    }
    config = load(environ)
    assert config.service("db").options.max_conns == 30
    assert config.service("db").adapter == "sqlfile"
    assert config.service("db").options.min_conns == 2
    # the winner does not depend on the order of the environment
    reordered = load(dict(reversed(list(environ.items()))))
    assert reordered.service("db") == config.service("db")


def test_legacy_value_that_fails_names_the_variable():
    with pytest.raises(InvalidOptionsError) as info:
        load({"DB_MAX_CONNS": "twenty"})
    assert info.value.source == "DB_MAX_CONNS"


def test_validate_does_not_log_legacy_warnings(caplog):
    with caplog.at_level(logging.WARNING, logger="toolkit.config"):
        assert Config.validate({}, {"DB_MAX_CONNS": "3"}) == []
    assert caplog.records == []


def test_spellings_of_one_field_resolve_independently_of_order():
    environ = {"CACHE__DEFAULT__MAXENTRIES": "1", "CACHE__DEFAULT__MAX_ENTRIES": "2"}
    forward = read_environ(environ)
    backward = read_environ(dict(reversed(list(environ.items()))))
    assert forward.services == backward.services
