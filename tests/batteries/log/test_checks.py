"""The log battery's app and system checks."""

from __future__ import annotations

import pytest
from django.core import checks
from django.test import override_settings

from tests.support.checks import battery_messages


def log_messages() -> list[checks.CheckMessage]:
    return battery_messages("toolkit_log")


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
