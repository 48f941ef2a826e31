"""The lock battery's app and system checks."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.core import checks
from django.test import override_settings

from toolkit_batteries.lock.apps import LockConfig

SECRET = "hunter2-secret"


def lock_messages() -> list[checks.CheckMessage]:
    app = apps.get_app_config("toolkit_lock")
    return [m for m in checks.run_checks(app_configs=[app]) if m.id.startswith("toolkit_lock.")]


def test_the_app_is_installed_under_its_label() -> None:
    app = apps.get_app_config("toolkit_lock")
    assert isinstance(app, LockConfig)
    assert (app.name, app.service) == ("toolkit_batteries.lock", "lock")


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({}, []),
        ({"adapter": "redis", "options": {"url": "rediss://h:6380", "require_tls": True}}, []),
        ({"adapter": "kvserver", "options": {"require_tls": True}}, ["toolkit_lock.E002"]),
        ({"adapter": "kvserver", "options": {"url": f"http://{SECRET}@h"}}, ["toolkit_lock.E002"]),
        ({"options": {"ttl": "-1s"}}, ["toolkit_lock.E003"]),
        ({"options": {"max_entries": -2}}, ["toolkit_lock.E003"]),
        ({"options": {"ttl": "1s", "retry_interval": "2s"}}, ["toolkit_lock.W001"]),
        ({"options": {"retry_interval": "30s"}}, ["toolkit_lock.W001"]),
        ({"adapter": "db"}, ["toolkit_lock.E001"]),
    ],
)
def test_checks(block: dict, expected: list[str]) -> None:
    with override_settings(TOOLKIT={"lock": block}):
        messages = lock_messages()
    assert [m.id for m in messages] == expected
    assert all(SECRET not in str(m) for m in messages)
