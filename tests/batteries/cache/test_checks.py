"""The cache battery's app and system checks."""

from __future__ import annotations

import pytest
from django.core import checks
from django.test import override_settings

from tests.support.checks import assert_checks, battery_messages

SECRET = "hunter2-secret"


def cache_messages() -> list[checks.CheckMessage]:
    return battery_messages("toolkit_cache")


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({}, []),
        ({"adapter": "kvserver", "options": {"url": "redis://localhost:6379/0"}}, []),
        (
            {
                "adapter": "redis",
                "options": {"addr": "rediss://localhost:6380", "require_tls": True},
            },
            [],
        ),
        ({"adapter": "kvserver", "options": {"require_tls": True}}, ["toolkit_cache.E002"]),
        (
            {"adapter": "kvserver", "options": {"addr": "localhost:notaport"}},
            ["toolkit_cache.E002"],
        ),
        (
            {"adapter": "kvserver", "options": {"url": f"memcached://{SECRET}@h"}},
            ["toolkit_cache.E002"],
        ),
        ({"adapter": "db", "options": {"dsn": f"mysql://u:{SECRET}@h/db"}}, ["toolkit_cache.E003"]),
        ({"adapter": "db", "options": {"dsn": "postgres://h/db"}}, []),
        ({"adapter": "memory", "options": {"max_entries": -1}}, ["toolkit_cache.E004"]),
        ({"adapter": "memory", "options": {"sweep_interval": "-5s"}}, ["toolkit_cache.E004"]),
        ({"adapter": "memory", "options": {"adapter": "kvserver"}}, ["toolkit_cache.W001"]),
        ({"adapter": "nope"}, ["toolkit_cache.E001"]),
    ],
)
def test_checks(block: dict, expected: list[str]) -> None:
    messages = assert_checks("cache", block, expected, secret=SECRET)
    assert all(m.msg.startswith("cache.default") or m.id.endswith("E001") for m in messages)


def test_checks_cover_every_instance() -> None:
    toolkit = {
        "cache": {"default": {}, "sessions": {"adapter": "memory", "options": {"max_entries": -3}}}
    }
    with override_settings(TOOLKIT=toolkit):
        (message,) = cache_messages()
    assert message.id == "toolkit_cache.E004" and message.msg.startswith("cache.sessions:")
    assert '"max_entries"' in message.msg
