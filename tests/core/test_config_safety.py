"""No value in errors or logs, no secret in redacted output, and a fast load."""

from __future__ import annotations

import json
import logging
import time

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import ConfigurationError

SECRET = "Sup3r-S3cret-VALUE-4242"


@pytest.mark.parametrize(
    ("settings", "environ"),
    [
        ({}, {"CACHE__DEFAULT__MAX_ENTRIES": SECRET}),
        ({}, {"RESILIENCE__DEFAULT__BREAKER_ENABLED": SECRET}),
        ({}, {"RESILIENCE__DEFAULT__RETRY_BASEDELAY": SECRET}),
        ({}, {"DB_MAX_CONNS": SECRET}),
        ({}, {"OBSERVABILITY__DEFAULT__HEADERS": SECRET}),
        ({}, {"MAILER__DEFAULT__ENCRYPTION": SECRET}),
        ({"mailer": {"options": {"port": SECRET}}}, {}),
        ({"mailer": {"options": {"encryption": SECRET}}}, {}),
        ({"mailer": {"options": {"pasword": SECRET}}}, {}),
        ({"mailer": {"adapter": "smtp", "optons": {"password": SECRET}}}, {}),
        ({"auth": {"options": {"jwt": SECRET}}}, {}),
        ({"cache": SECRET}, {}),
        ({"scheduler": {"options": {"dsn": f"postgresql://u:{SECRET}@h/db"}}}, {}),
        ({"plugins": {"sms": {"adapter": "acme", "options": SECRET}}}, {}),
        ({"plugins": {"sms": {"adapter": "acme", "token": SECRET}}}, {}),
    ],
)
def test_errors_and_logs_never_echo_values(settings, environ, caplog):
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(ConfigurationError) as info:
            Config.load(settings, environ)
        problems = Config.validate(settings, environ)
    assert problems
    assert SECRET not in str(info.value)
    assert SECRET not in repr(info.value)
    assert all(SECRET not in str(problem) for problem in problems)
    assert SECRET not in caplog.text


def test_legacy_warning_never_echoes_the_value(caplog):
    with caplog.at_level(logging.DEBUG):
        config = Config.load({}, {"AUTH_JWT_SECRET": SECRET, "MAILER_PASSWORD": SECRET})
    assert config.service("mailer").options.password == SECRET
    assert "AUTH_JWT_SECRET" in caplog.text and "MAILER_PASSWORD" in caplog.text
    assert SECRET not in caplog.text


def test_redacted_services_contains_no_secret():
    secrets = {
        "jwt": "jwt-secret-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "jwt_key": "rotated-key-secret-bbbbbbbbbbbbbbbbbbbbbbbb",
        "mailer": "mailer-password-ccc",
        "dsn": "dsn-password-ddd",
        "kv": "kv-password-eee",
        "header": "header-token-fff",
        "apikey": "x-api-key-ggg",
        "plugin": "plugin-api-key-hhh",
        "plugin_nested": "plugin-nested-token-iii",
        "env_dsn": "env-dsn-password-jjj",
        "search": "search-api-key-kkk",
    }
    settings = {
        "auth": {
            "options": {
                "jwt": {
                    "secret": secrets["jwt"],
                    "keys": [{"kid": "k1", "secret": secrets["jwt_key"]}],
                }
            }
        },
        "mailer": {"adapter": "smtp", "options": {"host": "smtp", "password": secrets["mailer"]}},
        "db": {
            "default": {"options": {"path": "db.sqlite3"}},
            "primary": {
                "adapter": "sqlserver",
                "options": {"dsn": f"postgresql://app:{secrets['dsn']}@db.internal:5432/app"},
            },
        },
        "observability": {
            "adapter": "otlp",
            "options": {
                "headers": {
                    "Authorization": f"Bearer {secrets['header']}",
                    "x-api-key": secrets["apikey"],
                }
            },
        },
        "search": {"options": {"api_key": secrets["search"]}},
        "plugins": {
            "sms_gateway": {
                "adapter": "acme",
                "options": {
                    "api_key": secrets["plugin"],
                    "endpoint": "https://sms.example",
                    "auth": {"token": secrets["plugin_nested"]},
                },
            }
        },
    }
    environ = {
        "CACHE__DEFAULT__PASSWORD": secrets["kv"],
        "CACHE__DEFAULT__ADAPTER": "kvserver",
        "QUEUE__DEFAULT__DSN": f"postgresql://u:{secrets['env_dsn']}@h/q",
    }
    config = Config.load(settings, environ)
    # the values really are configured ...
    assert config.service("auth").options.jwt.secret == secrets["jwt"]
    assert config.plugin("sms_gateway").options["api_key"] == secrets["plugin"]
    rendered = config.redacted_services()
    text = json.dumps(rendered)
    # ... yet none of them is displayed
    for name, value in secrets.items():
        assert value not in text, name
    assert rendered["db"]["primary"]["options"]["dsn"].startswith("postgresql://app:")
    assert rendered["plugins"]["sms_gateway"]["default"]["options"]["endpoint"] == (
        "https://sms.example"
    )
    assert rendered["cache"]["default"]["adapter"] == "kvserver"
    assert set(rendered) == {*config.services, "plugins"}
    # the repr of a resolved instance is display-safe too
    for service in ("auth", "mailer", "observability"):
        assert all(v not in repr(config.service(service)) for v in secrets.values())
    assert secrets["plugin"] not in repr(config.plugin("sms_gateway"))
    assert secrets["dsn"] not in repr(config.service("db", "primary"))


def test_redacted_services_masks_secret_looking_keys_of_undeclared_maps():
    roles = {"api_token": ["admin"], "x-api-key": ["admin"], "alice": ["editor"]}
    config = Config.load({"permission": {"options": {"roles": roles}}}, {})
    rendered = config.redacted_services()["permission"]["default"]["options"]["roles"]
    assert rendered == {"api_token": "[redacted]", "x-api-key": "[redacted]", "alice": ["editor"]}


def test_load_with_100_environment_variables_is_fast():
    environ = {f"UNRELATED_VAR_{i}": "x" for i in range(40)}
    environ.update({f"TOOLKIT_SECRET_{i}": "s" for i in range(10)})
    environ.update({f"APP__SETTING__{i}": "1" for i in range(20)})
    environ.update(
        {
            "CACHE__DEFAULT__MAX_ENTRIES": "5000",
            "CACHE__DEFAULT__ADAPTER": "kvserver",
            "AUTH__DEFAULT__JWT_SECRET": "s" * 40,
            "DB__DEFAULT__MAX_CONNS": "20",
            "DB__PRIMARY__DSN": "postgresql://h/p",
            "EVENTBUS__DEFAULT__KVSERVER_ADDR": "r:6379",
            "RESILIENCE__DEFAULT__BREAKER_ENABLED": "1",
            "RESILIENCE__DEFAULT__RETRY_BASEDELAY": "1s",
            "MAILER__DEFAULT__PORT": "2525",
            "SCHEDULER__DEFAULT__CLOSE_TIMEOUT": "10s",
        }
    )
    environ.update({f"QUEUE__Q{i}__ADDR": f"r{i}:6379" for i in range(100 - len(environ))})
    assert len(environ) == 100
    Config.load({}, environ)  # warm the per-class caches
    best = min(_timed(lambda: Config.load({}, environ)) for _ in range(30))
    assert best < 0.02  # about 1 ms on an idle machine; room for a loaded two-core one


def _timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start
