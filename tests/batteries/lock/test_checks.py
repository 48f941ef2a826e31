"""The lock battery's app and system checks."""

from __future__ import annotations

import pytest
from django.core import checks

from tests.support.checks import assert_checks, battery_messages

SECRET = "hunter2-secret"


def lock_messages() -> list[checks.CheckMessage]:
    return battery_messages("toolkit_lock")


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
    assert_checks("lock", block, expected, secret=SECRET)
