"""The LLM stand-ins refuse what the real APIs refuse, so a malformed adapter request fails.

Each case is a request the real API answers with a 4xx (its documented error body); the
stand-in must do the same, or the adapter tests in this folder could pass while the adapter
sends something a provider would refuse.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from .server import FakeChatCompletionsAPI, FakeGenerativeLanguageAPI, FakeMessagesAPI

KEY = "sk-strict-server-key-0123"


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


MESSAGES_HEADERS = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
GOOD_MESSAGE = {"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"not json at all", "application/json"),
        (json.dumps(GOOD_MESSAGE).encode(), "text/plain"),
        (json.dumps({k: v for k, v in GOOD_MESSAGE.items() if k != "max_tokens"}).encode(), None),
        (json.dumps([GOOD_MESSAGE]).encode(), None),
    ],
    ids=["non-json", "text-plain", "no-max-tokens", "json-array"],
)
def test_the_messages_api_refuses_malformed_requests(body, content_type):
    with FakeMessagesAPI(KEY) as server:
        headers = {**MESSAGES_HEADERS, "Content-Type": content_type or "application/json"}
        status, answer = post(f"{server.url}/v1/messages", body, headers)
        assert status == 400
        assert answer["type"] == "error" and answer["error"]["type"] == "invalid_request_error"
        good = post(
            f"{server.url}/v1/messages",
            json.dumps(GOOD_MESSAGE).encode(),
            {**MESSAGES_HEADERS, "Content-Type": "application/json"},
        )
        assert good[0] == 200


def test_chat_completions_require_model_and_messages():
    with FakeChatCompletionsAPI(KEY) as server:
        headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
        status, answer = post(
            f"{server.url}/chat/completions", json.dumps({"model": "m"}).encode(), headers
        )
        assert status == 400 and answer["error"]["type"] == "invalid_request_error"
        status, _ = post(f"{server.url}/embeddings", json.dumps({"input": ["a"]}).encode(), headers)
        assert status == 400


def test_gemini_streams_only_with_alt_sse():
    with FakeGenerativeLanguageAPI(KEY) as server:
        headers = {"x-goog-api-key": KEY, "Content-Type": "application/json"}
        body = json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).encode()
        url = f"{server.url}/v1beta/models/g:streamGenerateContent"
        status, answer = post(url, body, headers)
        assert status == 400 and answer["error"]["status"] == "INVALID_ARGUMENT"
        status, _ = post(f"{server.url}/v1beta/models/g:generateContent", b"{}", headers)
        assert status == 400  # no contents
