"""System checks of the auth battery (``manage.py check --tag toolkit``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.apps import apps
from django.core import checks
from django.test import override_settings

from .conftest import OLD_SECRET, SECRET

ROOT = Path(__file__).resolve().parents[3]


def auth_messages(toolkit: dict, **extra_settings) -> list[checks.CheckMessage]:
    app = apps.get_app_config("toolkit_auth")
    with override_settings(TOOLKIT=toolkit, **extra_settings):
        found = checks.run_checks(app_configs=[app], tags=["toolkit"])
    return [m for m in found if m.id.startswith("toolkit_auth.")]


def ids(toolkit: dict, **extra_settings) -> list[str]:
    return [m.id for m in auth_messages(toolkit, **extra_settings)]


def jwt_block(**jwt_options) -> dict:
    return {"auth": {"adapter": "jwt", "options": {"jwt": jwt_options}}}


def test_a_good_configuration_has_no_messages():
    assert ids(jwt_block(secret=SECRET)) == []
    keys = [{"kid": "a", "secret": OLD_SECRET}]
    assert ids(jwt_block(keys=keys, active_kid="a")) == []


def test_no_secret_is_a_warning(monkeypatch):
    monkeypatch.delenv("AUTH__DEFAULT__JWT_SECRET", raising=False)
    monkeypatch.delenv("AUTH_JWT_SECRET", raising=False)
    (message,) = auth_messages({})
    assert message.id == "toolkit_auth.W001" and message.level == checks.WARNING
    assert "AUTH__DEFAULT__JWT_SECRET" in message.hint
    monkeypatch.setenv("AUTH__DEFAULT__JWT_SECRET", SECRET)
    assert ids({}) == []


@pytest.mark.parametrize(
    ("jwt_options", "field"),
    [
        ({"secret": "too-short-secret-value"}, "jwt.secret"),
        ({"keys": [{"kid": "a", "secret": "short-key-secret"}]}, "jwt.keys[0].secret"),
        ({"keys": [{"kid": "a", "secret": OLD_SECRET}], "active_kid": "gone"}, "jwt.active_kid"),
    ],
)
def test_broken_jwt_options_are_errors_naming_the_field(jwt_options, field):
    (message,) = auth_messages(jwt_block(**jwt_options))
    assert message.id == "toolkit_auth.E002" and message.level == checks.ERROR
    assert f'"{field}"' in message.msg
    for value in ("too-short-secret-value", "short-key-secret", OLD_SECRET):
        assert value not in message.msg


@pytest.mark.parametrize(
    "oidc",
    [
        {"issuer": "http://id.example", "client_id": "c"},
        {"issuer": "https://127.0.0.1", "client_id": "c"},
        {"issuer": "https://id.example", "client_id": ""},
        {"issuer": "", "client_id": "c"},
    ],
)
def test_broken_oidc_options_are_errors(oidc):
    assert ids({"auth": {"adapter": "oidc", "options": {"oidc": oidc}}}) == ["toolkit_auth.E003"]


def test_insecure_oidc_is_accepted_with_allow_insecure():
    oidc = {"issuer": "http://127.0.0.1:9", "client_id": "c", "allow_insecure": True}
    assert ids({"auth": {"adapter": "oidc", "options": {"oidc": oidc}}}) == []


@pytest.mark.parametrize("value", ["redis", "cache:a:b.c", "tests.nowhere.factory", 3])
def test_a_bad_revocation_setting_is_an_error(value):
    found = ids(jwt_block(secret=SECRET), TOOLKIT_AUTH_REVOCATION=value)
    assert found == ["toolkit_auth.E004"]


@pytest.mark.parametrize("adapter", ["memory", "db"])
def test_an_evicting_cache_as_revocation_store_is_an_error(adapter):
    toolkit = {**jwt_block(secret=SECRET), "cache": {"adapter": adapter}}
    assert ids(toolkit, TOOLKIT_AUTH_REVOCATION="cache") == ["toolkit_auth.E005"]
    toolkit = {**jwt_block(secret=SECRET), "cache": {"adapter": "kvserver"}}
    assert ids(toolkit, TOOLKIT_AUTH_REVOCATION="cache") == []


def test_a_memory_session_store_is_a_warning_only_in_development(monkeypatch):
    toolkit = {**jwt_block(secret=SECRET), "session": {"adapter": "memory"}}
    assert ids(toolkit, TOOLKIT_AUTH_REVOCATION="session") == ["toolkit_auth.W002"]
    monkeypatch.delenv("TOOLKIT_ENV", raising=False)
    assert ids({"auth": {"adapter": "session"}}) == ["toolkit_auth.E006"]
    monkeypatch.setenv("TOOLKIT_ENV", "development")
    assert ids({"auth": {"adapter": "session"}}) == ["toolkit_auth.W002"]
    kv = {"auth": {"adapter": "session"}, "session": {"adapter": "kvserver"}}
    assert ids(kv) == []


def test_an_unknown_adapter_is_e001():
    assert ids({"auth": {"adapter": "ldap"}}) == ["toolkit_auth.E001"]


def test_importing_the_battery_imports_no_vendor_sdk():
    code = (
        "import sys, django, os\n"
        "os.environ['DJANGO_SETTINGS_MODULE'] = 'tests.settings'\n"
        "django.setup()\n"
        "import toolkit_batteries.auth, toolkit_batteries.auth.checks\n"
        "import toolkit_batteries.auth.decorators, toolkit_batteries.auth.revocation\n"
        "print(sorted(m for m in ('jwt', 'cryptography', 'redis') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "[]"
