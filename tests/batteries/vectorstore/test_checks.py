"""The vectorstore's system checks: targets, dimension and URL, never connecting."""

from __future__ import annotations

from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config


def ids(toolkit: dict) -> list[str]:
    return [message.id for message in service_checks("vectorstore", Config.load(toolkit, {}))]


def test_a_good_configuration_passes():
    assert ids({"vectorstore": {"adapter": "db", "options": {"dsn": "postgres://h/app"}}}) == []
    assert (
        ids({"vectorstore": {"adapter": "vecengine", "options": {"url": "https://v:6333"}}}) == []
    )
    assert ids({"vectorstore": {"adapter": "vecengine", "options": {"url": "file:///srv/v"}}}) == []


def test_a_dsn_that_is_not_a_sql_target_is_e002():
    assert ids({"vectorstore": {"adapter": "db", "options": {"dsn": "redis://h:6379"}}}) == [
        "toolkit_vectorstore.E002"
    ]


def test_a_dimension_out_of_range_is_e003():
    assert ids({"vectorstore": {"adapter": "db", "options": {"dimension": 20000}}}) == [
        "toolkit_vectorstore.E003"
    ]


def test_an_http_url_without_allow_insecure_is_e004_without_the_url():
    toolkit = {
        "vectorstore": {"adapter": "vecengine", "options": {"url": "http://secret-host:6333"}}
    }
    messages = service_checks("vectorstore", Config.load(toolkit, {}))
    assert [m.id for m in messages] == ["toolkit_vectorstore.E004"]
    assert "secret-host" not in messages[0].msg
    toolkit["vectorstore"]["options"]["allow_insecure"] = True
    assert ids(toolkit) == []
