"""The idempotency battery's app and system checks."""

from __future__ import annotations

import pytest
from django.core import checks
from django.test import override_settings

from tests.support.checks import assert_checks, battery_messages

SECRET = "hunter2-secret"


def messages() -> list[checks.CheckMessage]:
    return battery_messages("toolkit_idempotency")


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({}, []),
        ({"adapter": "kvserver", "options": {"kvserver": {"addr": "redis://h:6379/2"}}}, []),
        (
            {"adapter": "kvserver", "options": {"kvserver": {"require_tls": True}}},
            ["toolkit_idempotency.E002"],
        ),
        (
            {"adapter": "kvserver", "options": {"kvserver": {"addr": f"ftp://{SECRET}@h"}}},
            ["toolkit_idempotency.E002"],
        ),
        (
            {"adapter": "kvserver", "options": {"kvserver": {"url": "redis://h"}}},
            ["toolkit_idempotency.W001"],
        ),
        (
            {"adapter": "db", "options": {"dsn": f"mysql://u:{SECRET}@h/db"}},
            ["toolkit_idempotency.E003"],
        ),
        ({"adapter": "db", "options": {"dsn": "postgres://h/db"}}, []),
        ({"options": {"ttl": "-1h"}}, ["toolkit_idempotency.E004"]),
        ({"options": {"max_entries": -1}}, ["toolkit_idempotency.E004"]),
        ({"adapter": "nope"}, ["toolkit_idempotency.E001"]),
    ],
)
def test_checks(block: dict, expected: list[str]) -> None:
    assert_checks("idempotency", block, expected, secret=SECRET)


def test_e002_names_the_field_under_its_block() -> None:
    block = {"adapter": "kvserver", "options": {"kvserver": {"require_tls": True}}}
    with override_settings(TOOLKIT={"idempotency": block}):
        (message,) = messages()
    assert 'option "kvserver.require_tls"' in message.msg
