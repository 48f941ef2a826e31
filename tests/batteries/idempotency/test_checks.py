"""The idempotency battery's app and system checks."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.core import checks
from django.test import override_settings

from toolkit_batteries.idempotency.apps import IdempotencyConfig

SECRET = "hunter2-secret"


def messages() -> list[checks.CheckMessage]:
    app = apps.get_app_config("toolkit_idempotency")
    return [
        m for m in checks.run_checks(app_configs=[app]) if m.id.startswith("toolkit_idempotency.")
    ]


def test_the_app_is_installed_under_its_label() -> None:
    app = apps.get_app_config("toolkit_idempotency")
    assert isinstance(app, IdempotencyConfig)
    assert (app.name, app.service) == ("toolkit_batteries.idempotency", "idempotency")


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
    with override_settings(TOOLKIT={"idempotency": block}):
        found = messages()
    assert [m.id for m in found] == expected
    assert all(SECRET not in str(m) for m in found)


def test_e002_names_the_field_under_its_block() -> None:
    block = {"adapter": "kvserver", "options": {"kvserver": {"require_tls": True}}}
    with override_settings(TOOLKIT={"idempotency": block}):
        (message,) = messages()
    assert 'option "kvserver.require_tls"' in message.msg
