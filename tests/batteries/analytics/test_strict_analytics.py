"""The PostHog stand-in refuses what ``/batch/`` refuses, and the adapter's batches pass.

Malformed requests go raw (urllib) so the server's refusal is what is tested; the adapter
test then shows every batch it sends (including an event near the size limit) is taken.
"""

from __future__ import annotations

import gzip
import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from .conftest import API_KEY, open_analytics, provider_block
from .server import MAX_BODY, MAX_EVENT, BatchServer

EVENT = {"event": "signup", "distinct_id": "u1", "timestamp": "2027-01-02T03:04:05+00:00"}


def post(
    server: BatchServer,
    body: bytes,
    *,
    path: str = "/batch/",
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    request = urllib.request.Request(
        server.url + path,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def batch(*items: Any, key: str | None = API_KEY) -> bytes:
    body: dict[str, Any] = {"batch": list(items)}
    if key is not None:
        body["api_key"] = key
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    ("body", "headers", "status", "code"),
    [
        (batch(EVENT, key=None), {}, 401, "missing_api_key"),
        (batch(EVENT, key="phc_other"), {}, 401, "invalid_api_key"),
        (batch(EVENT), {"Content-Type": "text/plain"}, 400, "invalid_payload"),
        (b"not json", {}, 400, "invalid_payload"),
        (json.dumps([EVENT]).encode(), {}, 400, "invalid_payload"),
        (batch(), {}, 400, "invalid_payload"),
        (batch({"distinct_id": "u1"}), {}, 400, "invalid_payload"),
        (batch({"event": "", "distinct_id": "u1"}), {}, 400, "invalid_payload"),
        (batch({"event": "signup"}), {}, 400, "invalid_payload"),
        (batch({**EVENT, "timestamp": "yesterday"}), {}, 400, "invalid_payload"),
        (batch({**EVENT, "properties": {"blob": "x" * MAX_EVENT}}), {}, 413, "payload_too_large"),
        (b"{" + b" " * MAX_BODY + b"}", {}, 413, "payload_too_large"),
    ],
    ids=[
        "no-key", "other-key", "text-plain", "not-json", "json-list", "empty-batch",
        "no-event", "empty-event", "no-distinct-id", "bad-timestamp", "event-over-1mb",
        "body-over-20mb",
    ],
)  # fmt: skip
def test_malformed_batches_are_refused(server, body, headers, status, code):
    got, answer = post(server, body, headers=headers)
    assert got == status
    assert answer["code"] == code and answer["detail"]
    assert server.events() == []


def test_a_gzipped_batch_is_taken_and_other_paths_are_not(server):
    got, answer = post(server, gzip.compress(batch(EVENT)), headers={"Content-Encoding": "gzip"})
    assert (got, answer) == (200, {"status": 1})
    assert [e["event"] for e in server.events()] == ["signup"]
    assert post(server, batch(EVENT), path="/capture/")[0] == 404
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(server.url + "/batch/", timeout=10)
    assert refused.value.code == 405


def test_a_distinct_id_in_properties_is_taken(server):
    item = {"event": "tick", "properties": {"distinct_id": "u9"}}
    assert post(server, batch(item))[0] == 200


def test_the_adapters_batches_all_pass(server):
    container = open_analytics(provider_block(server))
    analytics = container.analytics()
    analytics.capture("signup", {"plan": "pro"}, distinct_id="u1")
    analytics.capture("big", {"blob": "x" * 60_000}, distinct_id="u1")  # near the cap
    analytics.identify("u1", {"email_domain": "example.org"})
    analytics.group("acme", {"seats": 12}, distinct_id="u1")
    assert analytics.flush() == 4
    container.close()
    assert server.requests and {r.status for r in server.requests} == {200}
    assert [e["event"] for e in server.events()] == ["signup", "big", "$identify", "$groupidentify"]
