"""What only the searchengine adapter has: its requests, the outbound rules, the key."""

from __future__ import annotations

import logging

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError
from toolkit_batteries.search import SearchError
from toolkit_batteries.search.adapters.meilisearch import document_key, filter_expression

from .conftest import API_KEY, close_variant, open_variant


@pytest.fixture
def engine_search(request):
    handle = open_variant("searchengine", request)
    yield handle
    close_variant(handle)


def _container(host: str, **options):
    block = {"adapter": "meilisearch", "options": {"host": host, "api_key": API_KEY, **options}}
    return Container(Config.load({"search": {"default": block}}, {}))


def test_requests_follow_the_documented_wire_format(engine_search):
    server, search = engine_search.server, engine_search.search
    search.index("books", "b/1 é", {"title": "Moby Dick"}, filters={"lang": "en", "n": 3})
    search.query("books", 'whale "white whale"', filters={"lang": ["en", "fr"], "n": 3}, limit=5)
    calls = [(r["method"], r["path"]) for r in server.requests]
    assert calls[0] == ("PATCH", "/indexes/books/settings")  # before the first documents
    assert ("POST", "/indexes/books/documents") in calls
    assert calls[-1] == ("POST", "/indexes/books/search")
    assert all(r["headers"]["authorization"] == f"Bearer {API_KEY}" for r in server.requests)
    add = next(r for r in server.requests if r["path"] == "/indexes/books/documents")
    assert add["query"] == {"primaryKey": ["id"]}
    assert add["body"] == [
        {
            "id": document_key("b/1 é"),
            "doc_id": "b/1 é",
            "fields": {"title": "Moby Dick"},
            "filters": {"lang": "en", "n": 3},
        }
    ]
    settings = next(r for r in server.requests if r["method"] == "PATCH")
    assert settings["body"] == {
        "filterableAttributes": ["filters"],
        "searchableAttributes": ["fields"],
    }
    body = server.requests[-1]["body"]
    assert body["q"] == 'whale "white whale"'
    assert body["filter"] == 'filters.lang IN ["en", "fr"] AND filters.n = 3'
    assert body["limit"] == 6 and body["offset"] == 0  # one more, to know a next page exists
    assert body["matchingStrategy"] == "all" and body["showRankingScore"] is True
    assert body["highlightPreTag"] != "<em>" and body["attributesToCrop"] == ["fields"]
    # Every write waited for its task.
    assert sum(1 for m, p in calls if p.startswith("/tasks/")) >= 2


def test_filter_values_are_quoted_for_the_engine():
    expression = filter_expression({"a": ('x" OR filters.b = "y',), "b": (True,), "c": (1.5,)})
    assert (
        expression
        == 'filters.a = "x\\" OR filters.b = \\"y" AND filters.b = true AND filters.c = 1.5'
    )


def test_a_document_key_is_an_id_the_server_accepts():
    key = document_key("any id / with spaces? ü")
    assert key.isalnum() and len(key) == 33
    assert document_key("a") != document_key("b")


def test_settings_are_sent_once_per_index(engine_search):
    search, server = engine_search.search, engine_search.server
    for i in range(3):
        search.index("books", str(i), {"title": "x"})
    assert sum(1 for r in server.requests if r["method"] == "PATCH") == 1


def test_loopback_host_is_refused_without_allow_private(engine):
    with pytest.raises(InvalidOptionsError) as info:
        _container(engine.url, allow_insecure=True).search()
    assert 'option "host"' in str(info.value) and "allow_private" in str(info.value)
    assert engine.url not in str(info.value)
    assert engine.requests == []


def test_http_is_refused_without_allow_insecure(engine):
    with pytest.raises(InvalidOptionsError, match="allow_insecure"):
        _container(engine.url, allow_private=True).search()
    assert engine.requests == []


def test_host_is_required():
    with pytest.raises(InvalidOptionsError, match='"host" is required'):
        Container(Config.load({"search": {"adapter": "searchengine"}}, {})).search()


def test_a_wrong_key_is_a_clear_error_without_server_text(engine):
    container = _container(engine.url, allow_insecure=True, allow_private=True, api_key="nope")
    try:
        with pytest.raises(SearchError) as info:
            container.search().index("books", "1", {"title": "x"})
        assert "HTTP 403" in str(info.value) and "invalid_api_key" in str(info.value)
        assert "Authorization" not in str(info.value)
    finally:
        container.close()


def test_a_server_that_is_gone_is_service_unavailable(engine):
    container = _container(engine.url, allow_insecure=True, allow_private=True)
    search = container.search()
    engine.stop()
    try:
        with pytest.raises(ServiceUnavailableError) as info:
            search.query("books", "whale")
        assert engine.url not in str(info.value)
        with pytest.raises(ServiceUnavailableError):
            search.ping()
    finally:
        container.close()


def test_ping_asks_the_health_endpoint(engine_search):
    engine_search.search.ping()
    assert engine_search.server.requests[-1]["path"] == "/health"


def test_the_key_is_never_logged_or_shown(engine_search, caplog):
    caplog.set_level(logging.DEBUG)
    search = engine_search.search
    search.index("books", "1", {"title": "whales"})
    search.query("books", "whales")
    with pytest.raises(SearchError):
        search.query("books", "")
    assert API_KEY not in caplog.text
    assert API_KEY not in repr(search) and API_KEY not in repr(engine_search.container)
    assert API_KEY not in str(engine_search.container.config.redacted_services())
