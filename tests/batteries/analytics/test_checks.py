"""The analytics battery's app and system checks."""

from __future__ import annotations

import pytest
from django.core import checks
from django.test import override_settings

from tests.support.checks import assert_checks, battery_messages

KEY = "phc_check-key-Pq4-never-shown"


def messages() -> list[checks.CheckMessage]:
    return battery_messages("toolkit_analytics")


def provider(**options: object) -> dict:
    return {"adapter": "posthog", "options": {"api_key": KEY, **options}}


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({}, []),
        ({"options": {"api_key": KEY}}, ["toolkit_analytics.W001"]),
        ({"options": {"endpoint": "https://eu.i.example.com"}}, ["toolkit_analytics.W001"]),
        (provider(), []),
        (provider(endpoint="https://eu.i.example.com"), []),
        ({"adapter": "analytics_b"}, ["toolkit_analytics.E002"]),
        (provider(endpoint="http://eu.i.example.com"), ["toolkit_analytics.E003"]),
        (provider(endpoint="http://eu.i.example.com", allow_insecure=True), []),
        (provider(endpoint=f"https://u:{KEY}@eu.i.example.com"), ["toolkit_analytics.E003"]),
        (provider(endpoint="https://10.1.2.3"), ["toolkit_analytics.E003"]),
        (provider(endpoint="https://10.1.2.3", allow_private=True), []),
        ({"adapter": "segment"}, ["toolkit_analytics.E001"]),
    ],
)
def test_checks(block: dict, expected: list[str]) -> None:
    assert_checks("analytics", block, expected, secret=KEY)


def test_services_analytics_defaults_to_the_log_adapter(caplog) -> None:
    from toolkit_batteries import services
    from toolkit_batteries.analytics.adapters.log import LogAnalytics

    caplog.set_level("INFO", logger="toolkit.analytics")
    with override_settings(TOOLKIT={}):
        analytics = services.analytics()
        assert type(analytics) is LogAnalytics
        analytics.capture("booted", {"ok": True})
    (record,) = [r for r in caplog.records if hasattr(r, "analytics_event")]
    assert record.name == "toolkit.analytics" and record.levelname == "INFO"
    assert record.getMessage() == (
        'analytics.default: capture booted distinct_id=anonymous groups={} properties={"ok":true}'
    )
