"""The cache battery's app and system checks."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.core import checks
from django.test import override_settings

from toolkit_batteries.cache.apps import CacheConfig

SECRET = "hunter2-secret"


def cache_messages() -> list[checks.CheckMessage]:
    app = apps.get_app_config("toolkit_cache")
    return [m for m in checks.run_checks(app_configs=[app]) if m.id.startswith("toolkit_cache.")]


def test_the_app_is_installed_under_its_label() -> None:
    app = apps.get_app_config("toolkit_cache")
    assert isinstance(app, CacheConfig)
    assert (app.name, app.service) == ("toolkit_batteries.cache", "cache")


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
    with override_settings(TOOLKIT={"cache": block}):
        messages = cache_messages()
    assert [m.id for m in messages] == expected
    assert all(SECRET not in str(m) for m in messages)
    assert all(m.msg.startswith("cache.default") or m.id.endswith("E001") for m in messages)


def test_checks_cover_every_instance() -> None:
    toolkit = {
        "cache": {"default": {}, "sessions": {"adapter": "memory", "options": {"max_entries": -3}}}
    }
    with override_settings(TOOLKIT=toolkit):
        (message,) = cache_messages()
    assert message.id == "toolkit_cache.E004" and message.msg.startswith("cache.sessions:")
    assert '"max_entries"' in message.msg
