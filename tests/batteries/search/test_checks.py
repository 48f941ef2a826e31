"""The search battery's system checks: they name instances and fields, never values."""

from __future__ import annotations

import pytest

from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config


def _ids(block: dict) -> list[str]:
    return [m.id for m in service_checks("search", Config.load({"search": block}, {}))]


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({"adapter": "db"}, []),
        ({"adapter": "searchengine", "options": {"host": "https://search.example.com"}}, []),
        ({"adapter": "searchengine"}, ["toolkit_search.E002"]),
        (
            {"adapter": "searchengine", "options": {"host": "http://search.example.com"}},
            ["toolkit_search.E002"],
        ),
        (
            {"adapter": "searchengine", "options": {"host": "https://127.0.0.1:7700"}},
            ["toolkit_search.E002"],
        ),
        (
            {
                "adapter": "meilisearch",
                "options": {
                    "host": "http://127.0.0.1:7700",
                    "allow_insecure": True,
                    "allow_private": True,
                },
            },
            [],
        ),
        ({"adapter": "db", "options": {"dsn": "mysql://x@h/db"}}, ["toolkit_search.E003"]),
        ({"adapter": "sqlserver", "options": {"language": "en glish;"}}, ["toolkit_search.E004"]),
    ],
)
def test_checks(block, expected):
    assert _ids(block) == expected


def test_messages_never_show_the_host():
    host = "http://user:pw@search.example.com"
    messages = service_checks(
        "search",
        Config.load({"search": {"adapter": "searchengine", "options": {"host": host}}}, {}),
    )
    assert messages and all("pw" not in m.msg and "example" not in m.msg for m in messages)
