"""The Meilisearch stand-in refuses what Meilisearch refuses and indexes asynchronously.

Raw requests (urllib) show the refusals and the task life cycle (``enqueued``, then
``processing``, then ``succeeded`` on a later poll, the write invisible until then); the
adapter tests show the battery waits on every task and its requests all pass.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from .conftest import API_KEY
from .engine_server import EngineServer


def call(
    server: EngineServer,
    method: str,
    path: str,
    body: Any = None,
    *,
    headers: dict[str, str] | None = None,
    raw: bytes | None = None,
) -> tuple[int, Any]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    sent = {"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"}
    request = urllib.request.Request(
        server.url + path, data=data, method=method, headers={**sent, **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def settled(server: EngineServer, task: dict) -> dict:
    """Poll the task as a client does until it is finished (bounded by polls_to_finish)."""
    for _ in range(server.polls_to_finish):
        status, found = call(server, "GET", f"/tasks/{task['taskUid']}")
        assert status == 200
    return found


@pytest.fixture
def filterable(engine: EngineServer) -> EngineServer:
    task = call(engine, "PATCH", "/indexes/books/settings", {"filterableAttributes": ["filters"]})
    assert settled(engine, task[1])["status"] == "succeeded"
    document = {"id": "b1", "fields": {"title": "Moby Dick"}, "filters": {"lang": "en"}}
    assert settled(engine, call(engine, "POST", "/indexes/books/documents", [document])[1])
    return engine


def test_a_write_is_enqueued_and_visible_only_once_its_task_succeeded(engine):
    status, task = call(engine, "POST", "/indexes/books/documents?primaryKey=id", [{"id": "a"}])
    assert status == 202 and task["status"] == "enqueued"
    assert call(engine, "GET", "/indexes/books/documents/a")[0] == 404  # nothing applied yet
    first = call(engine, "GET", f"/tasks/{task['taskUid']}")[1]
    assert first["status"] == "processing" and first["finishedAt"] is None
    assert call(engine, "GET", "/indexes/books/documents/a")[0] == 404
    second = call(engine, "GET", f"/tasks/{task['taskUid']}")[1]
    assert second["status"] == "succeeded" and second["finishedAt"]
    assert call(engine, "GET", "/indexes/books/documents/a") == (200, {"id": "a"})


def test_tasks_finish_in_the_order_they_were_enqueued(engine):
    first = call(engine, "POST", "/indexes/books/documents", [{"id": "a", "n": 1}])[1]
    second = call(engine, "POST", "/indexes/books/documents", [{"id": "a", "n": 2}])[1]
    assert settled(engine, second)["status"] == "succeeded"
    assert call(engine, "GET", f"/tasks/{first['taskUid']}")[1]["status"] == "succeeded"
    assert call(engine, "GET", "/indexes/books/documents/a")[1]["n"] == 2


@pytest.mark.parametrize(
    ("document", "code"),
    [({"title": "no id"}, "missing_document_id"), ({"id": "b/1 é"}, "invalid_document_id")],
)
def test_a_bad_document_fails_its_task_not_the_request(engine, document, code):
    status, task = call(engine, "POST", "/indexes/books/documents", [document])
    assert status == 202
    done = settled(engine, task)
    assert done["status"] == "failed" and done["error"]["code"] == code


@pytest.mark.parametrize(
    ("kwargs", "status", "code"),
    [
        ({"headers": {"Authorization": ""}}, 401, "missing_authorization_header"),
        ({"headers": {"Authorization": "Bearer other"}}, 403, "invalid_api_key"),
        ({"headers": {"Content-Type": "text/plain"}}, 415, "invalid_content_type"),
        ({"raw": b"{not json"}, 400, "malformed_payload"),
        ({"body": {"q": "x", "colour": "red"}}, 400, "bad_request"),
        ({"body": {"q": "x", "limit": -1}}, 400, "invalid_search_limit"),
        ({"body": {"q": "x", "offset": "3"}}, 400, "invalid_search_offset"),
        ({"body": {"filter": "filters.lang ="}}, 400, "invalid_search_filter"),
        ({"body": {"filter": "filters.lang IN [\"en\""}}, 400, "invalid_search_filter"),
        ({"body": {"filter": "filters.lang = \"en\" AND"}}, 400, "invalid_search_filter"),
        ({"body": {"filter": "filters.lang = \"en\" OR x"}}, 400, "invalid_search_filter"),
        ({"body": {"filter": "title = \"x\""}}, 400, "invalid_search_filter"),
    ],
    ids=[
        "no-auth", "other-key", "text-plain", "not-json", "unknown-param", "negative-limit",
        "string-offset", "dangling-equals", "unclosed-list", "dangling-and", "unknown-op",
        "not-filterable",
    ],
)  # fmt: skip
def test_malformed_searches_answer_the_documented_error(filterable, kwargs, status, code):
    kwargs = {"body": {"q": "moby"}, **kwargs}
    if kwargs.get("headers", {}).get("Authorization") == "":
        request = urllib.request.Request(
            filterable.url + "/indexes/books/search",
            data=json.dumps(kwargs["body"]).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        got, answer = refused.value.code, json.loads(refused.value.read())
    else:
        got, answer = call(filterable, "POST", "/indexes/books/search", **kwargs)
    assert got == status
    assert answer["code"] == code and answer["link"].endswith(code) and answer["message"]


def test_a_filter_counts_only_once_its_setting_task_succeeded(engine):
    task = call(engine, "PATCH", "/indexes/books/settings", {"filterableAttributes": ["filters"]})
    search = {"q": "", "filter": 'filters.lang = "en"'}
    assert call(engine, "POST", "/indexes/books/search", search)[1]["code"] == (
        "invalid_search_filter"
    )
    settled(engine, task[1])
    assert call(engine, "POST", "/indexes/books/search", search)[0] == 200


def test_unknown_settings_and_bad_index_uids_are_refused(engine):
    assert call(engine, "PATCH", "/indexes/books/settings", {"colour": 1})[1]["code"] == (
        "bad_request"
    )
    assert call(engine, "POST", "/indexes/b%20ooks/documents", [{"id": "a"}])[1]["code"] == (
        "invalid_index_uid"
    )


def test_the_adapter_waits_on_every_task_and_passes(engine_search_strict):
    server, search = engine_search_strict.server, engine_search_strict.search
    server.polls_to_finish = 3  # the adapter must poll until the task is done
    search.index("books", "b/1 é", {"title": "Moby Dick"}, filters={"lang": "en"})
    page = search.query("books", "moby", filters={"lang": ["en", "fr"]})
    assert [hit.doc_id for hit in page.hits] == ["b/1 é"]
    assert search.delete("books", "b/1 é") is True
    assert search.query("books", "moby").hits == []
    statuses = [(r["method"], r["path"]) for r in server.requests]
    polls = [p for m, p in statuses if p.startswith("/tasks/")]
    assert len(polls) >= 3 * 3  # settings, documents and the deletion, each polled to the end
    assert all(t["status"] == "succeeded" for t in server.tasks.values())


@pytest.fixture
def engine_search_strict(request):
    from .conftest import close_variant, open_variant

    handle = open_variant("searchengine", request)
    yield handle
    close_variant(handle)
