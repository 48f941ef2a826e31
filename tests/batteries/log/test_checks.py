"""The log battery's app and system checks."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.core import checks
from django.test import override_settings

from toolkit_batteries.log.apps import LogConfig


def log_messages() -> list[checks.CheckMessage]:
    app = apps.get_app_config("toolkit_log")
    return [m for m in checks.run_checks(app_configs=[app]) if m.id.startswith("toolkit_log.")]


def test_the_app_is_installed_under_its_label() -> None:
    app = apps.get_app_config("toolkit_log")
    assert isinstance(app, LogConfig)
    assert (app.name, app.service) == ("toolkit_batteries.log", "log")


@pytest.mark.parametrize(
    ("toolkit", "debug", "expected"),
    [
        ({"log": {"adapter": "pretty"}}, False, ["toolkit_log.W001"]),
        ({"log": {"adapter": "pretty"}}, True, []),
        ({"log": {"adapter": "log_b"}}, False, []),
        ({}, False, []),
        ({"log": {"adapter": "nope"}}, False, ["toolkit_log.E001"]),
    ],
)
def test_checks(toolkit: dict, debug: bool, expected: list[str]) -> None:
    with override_settings(TOOLKIT=toolkit, DEBUG=debug):
        assert [m.id for m in log_messages()] == expected


def test_w001_names_the_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOG__AUDIT__ADAPTER", "pretty")
    with override_settings(TOOLKIT={}, DEBUG=False):
        (message,) = log_messages()
    assert message.id == "toolkit_log.W001" and message.msg.startswith("log.audit:")
