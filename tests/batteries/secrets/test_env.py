"""What only ``env`` has: the prefix rule and variable-name-only secret names."""

from __future__ import annotations

import os

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.secrets import InvalidSecretNameError, SecretNotFoundError
from toolkit_batteries.secrets.adapters.env import EnvSecrets


def open_env(options: dict | None = None) -> EnvSecrets:
    block = {"adapter": "env", "options": options or {}}
    return Container(Config.load({"secrets": block}, {})).secrets()


def test_env_is_the_default_and_toolkit_foo_is_secret_foo(monkeypatch):
    monkeypatch.setenv("TOOLKIT_FOO", "foo-value")
    secrets = Container(Config.load({}, {})).secrets()
    assert isinstance(secrets, EnvSecrets) and secrets.prefix == "TOOLKIT"
    assert secrets.get("FOO") == "foo-value"


def test_names_are_exact_and_case_sensitive(monkeypatch):
    monkeypatch.setenv("TOOLKIT_FOO", "foo-value")
    monkeypatch.delenv("TOOLKIT_foo", raising=False)
    with pytest.raises(SecretNotFoundError, match="environment variable TOOLKIT_foo is not set"):
        open_env().get("foo")


def test_the_prefix_comes_from_the_environment_too(monkeypatch):
    monkeypatch.setenv("SECRETS__DEFAULT__PREFIX", "MYAPP")
    monkeypatch.setenv("MYAPP_TOKEN", "t-value")
    secrets = Container(Config.load({}, dict(os.environ))).secrets()
    assert secrets.prefix == "MYAPP" and secrets.get("TOKEN") == "t-value"


@pytest.mark.parametrize("prefix", ["MY-APP", "9X", "  ", "A B"])
def test_an_unusable_prefix_fails_the_open_naming_the_field(prefix):
    with pytest.raises(InvalidOptionsError) as caught:
        open_env({"prefix": prefix})
    assert caught.value.field == "prefix"


@pytest.mark.parametrize("name", ["db/password", "db.password", "db-password", "db#field"])
def test_names_a_variable_cannot_hold_are_refused(name):
    with pytest.raises(InvalidSecretNameError, match="letters, digits and _ only"):
        open_env().get(name)
