"""The cdn battery's app and system checks, and the noop adapter's warning at open."""

from __future__ import annotations

import logging

import pytest
from django.core import checks
from django.test import override_settings

from tests.support.checks import assert_checks, battery_messages

from .conftest import open_cdn

TOKEN = "cftok-check-Hh3-never-shown"
ZONE = "023e105f4ecef8ad9ca31a8372d0c353"


def messages() -> list[checks.CheckMessage]:
    return battery_messages("toolkit_cdn")


def provider(**options: object) -> dict:
    return {"adapter": "cloudflare", "options": {"api_token": TOKEN, "zone_id": ZONE, **options}}


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({}, []),
        ({"options": {"zone_id": ZONE}}, ["toolkit_cdn.W001"]),
        ({"options": {"api_token": TOKEN, "zone_id": ZONE}}, ["toolkit_cdn.W001"] * 2),
        (provider(), []),
        (provider(base_url="https://api.example.com/client/v4"), []),
        (provider(api_token=""), ["toolkit_cdn.E002"]),
        (provider(zone_id=""), ["toolkit_cdn.E002"]),
        (provider(zone_id="zone/../x"), ["toolkit_cdn.E002"]),
        (provider(base_url="http://api.example.com"), ["toolkit_cdn.E003"]),
        (provider(base_url="http://api.example.com", allow_insecure=True), []),
        (provider(base_url=f"https://t:{TOKEN}@api.example.com"), ["toolkit_cdn.E003"]),
        (provider(base_url="https://192.168.1.9"), ["toolkit_cdn.E003"]),
        (provider(base_url="https://192.168.1.9", allow_private=True), []),
        ({"adapter": "fastly"}, ["toolkit_cdn.E001"]),
    ],
)
def test_checks(block: dict, expected: list[str]) -> None:
    assert_checks("cdn", block, expected, secret=TOKEN)


def test_noop_says_at_open_that_purges_are_discarded(caplog) -> None:
    caplog.set_level(logging.WARNING, logger="toolkit.cdn")
    container = open_cdn({})
    cdn = container.cdn()
    assert cdn.adapter_name == "noop"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "cdn.default: noop adapter: purges are discarded and no CDN is called "
        '(set "adapter": "cdn_a" to purge a real cache)'
    ]
    cdn.purge_urls(["https://www.example.org/"])
    assert cdn.discarded == {"urls": 1, "tags": 0}
    container.close()


def test_services_cdn_defaults_to_the_noop_adapter() -> None:
    from toolkit_batteries import services
    from toolkit_batteries.cdn.adapters.noop import NoopCDN

    with override_settings(TOOLKIT={}):
        cdn = services.cdn()
        assert type(cdn) is NoopCDN
        assert cdn.purge_tags(["home"]) == 1 and cdn.discarded == {"urls": 0, "tags": 1}
