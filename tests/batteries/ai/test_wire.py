"""What each adapter puts on the wire: path, auth header, body, streaming request.

The fakes record every request (:class:`.server.Received`); these tests assert the
provider's documented shapes, so an SDK upgrade that changes the wire shows up here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from toolkit_batteries.ai import AIProviderError

from .conftest import MODELS, new_key, open_ai
from .server import FAKES, TEXT, FakeProvider, error_a, error_b, error_c
from .test_contract import WEATHER

PROMPT = "Say hello"
SYSTEM = "Be brief."


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[tuple[object, FakeProvider, str]]:
    adapter = request.param
    key = new_key(adapter)
    server = FAKES[adapter](key).start()
    ai, container = open_ai(adapter, server, key)
    try:
        yield ai, server, key
    finally:
        container.close()
        server.stop()


def _round_trip(ai) -> None:
    first = ai.chat([{"role": "user", "content": "Weather in Paris?"}], tools=[WEATHER])
    call = first.tool_calls[0]
    ai.chat(
        [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": first.text, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call.id, "content": "sunny"},
        ],
        tools=[WEATHER],
    )


# ---------------------------------------------------------------------- llm_a


@pytest.mark.parametrize("served", ["llm_a"], indirect=True)
def test_llm_a_messages_request(served) -> None:
    import anthropic._constants

    ai, server, key = served
    ai.complete(PROMPT, system=SYSTEM, temperature=0.2)
    sent = server.received[0]
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert sent.headers["authorization"] == f"Bearer {key}" or sent.headers["x-api-key"] == key
    assert sent.headers["anthropic-version"] == anthropic._constants.ANTHROPIC_API_VERSION
    assert sent.headers["content-type"] == "application/json"
    assert sent.body == {
        "model": MODELS["llm_a"],
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": PROMPT}],
        "system": SYSTEM,
        "temperature": 0.2,
    }


@pytest.mark.parametrize("served", ["llm_a"], indirect=True)
def test_llm_a_tools_and_tool_results(served) -> None:
    ai, server, _ = served
    _round_trip(ai)
    first, second = server.received[0].body, server.received[1].body
    assert first["tools"] == [
        {
            "name": "weather",
            "description": WEATHER["description"],
            "input_schema": WEATHER["parameters"],
        }
    ]
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "weather",
                    "input": {"city": "Paris"},
                },
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "sunny"}],
        },
    ]


@pytest.mark.parametrize("served", ["llm_a"], indirect=True)
def test_llm_a_stream_request_and_error_body(served) -> None:
    ai, server, _ = served
    with ai.stream([{"role": "user", "content": PROMPT}]) as stream:
        assert "".join(stream) == TEXT
    assert server.received[0].body["stream"] is True
    server.failures.append((429, error_a("rate_limit_error", "slow down")))
    server.failures.append((400, error_a("invalid_request_error", "max_tokens: too large")))
    with pytest.raises(AIProviderError) as caught:
        ai.complete(PROMPT)
    assert (caught.value.status, caught.value.kind) == (400, "invalid_request_error")
    assert caught.value.detail == "max_tokens: too large"
    assert "max_tokens: too large" not in str(caught.value)


# ---------------------------------------------------------------------- llm_b, llm_d


@pytest.mark.parametrize("served", ["llm_b", "llm_d"], indirect=True)
def test_chat_completions_request(served) -> None:
    ai, server, key = served
    ai.complete(PROMPT, system=SYSTEM, temperature=0.2)
    sent = server.received[0]
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.headers["authorization"] == f"Bearer {key}"
    bound = "max_completion_tokens" if ai.adapter_name == "llm_b" else "max_tokens"
    assert sent.body == {
        "model": MODELS[ai.adapter_name],
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": PROMPT},
        ],
        bound: 1024,
        "temperature": 0.2,
    }


@pytest.mark.parametrize("served", ["llm_b", "llm_d"], indirect=True)
def test_chat_completions_tools_and_tool_results(served) -> None:
    ai, server, _ = served
    _round_trip(ai)
    first, second = server.received[0].body, server.received[1].body
    assert first["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "weather",
                "description": WEATHER["description"],
                "parameters": WEATHER["parameters"],
            },
        }
    ]
    assistant, tool = second["messages"][1:]
    assert assistant["role"] == "assistant"
    assert assistant["tool_calls"] == [
        {
            "id": "call_01",
            "type": "function",
            "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    assert tool == {"role": "tool", "content": "sunny", "tool_call_id": "call_01"}


@pytest.mark.parametrize("served", ["llm_b", "llm_d"], indirect=True)
def test_chat_completions_stream_embeddings_and_error_body(served) -> None:
    ai, server, key = served
    with ai.stream([{"role": "user", "content": PROMPT}]) as stream:
        assert "".join(stream) == TEXT
    body = server.received[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    ai.embed(["one", "two"], model="embed-x")
    sent = server.received[1]
    assert sent.path == "/v1/embeddings"
    assert sent.headers["authorization"] == f"Bearer {key}"
    assert sent.body == {"model": "embed-x", "input": ["one", "two"], "encoding_format": "float"}
    server.failures.append(
        (404, error_b("The model does not exist", "invalid_request_error", "model_not_found"))
    )
    with pytest.raises(AIProviderError) as caught:
        ai.complete(PROMPT)
    assert (caught.value.status, caught.value.kind) == (404, "invalid_request_error")
    assert caught.value.detail == "The model does not exist"


# ---------------------------------------------------------------------- llm_c


@pytest.mark.parametrize("served", ["llm_c"], indirect=True)
def test_llm_c_generate_content_request(served) -> None:
    ai, server, key = served
    ai.complete(PROMPT, system=SYSTEM, temperature=0.2)
    sent = server.received[0]
    assert (sent.method, sent.path) == ("POST", f"/v1beta/models/{MODELS['llm_c']}:generateContent")
    assert sent.headers["x-goog-api-key"] == key
    assert "key" not in sent.query  # the key travels in the header, never in the URL
    assert sent.body["contents"] == [{"role": "user", "parts": [{"text": PROMPT}]}]
    assert sent.body["systemInstruction"]["parts"] == [{"text": SYSTEM}]
    assert sent.body["generationConfig"] == {"maxOutputTokens": 1024, "temperature": 0.2}


@pytest.mark.parametrize("served", ["llm_c"], indirect=True)
def test_llm_c_tools_and_function_responses(served) -> None:
    ai, server, _ = served
    _round_trip(ai)
    first, second = server.received[0].body, server.received[1].body
    assert first["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "weather",
                    "description": WEATHER["description"],
                    "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}},
                }
            ]
        }
    ]  # the SDK writes JSON-schema types in the API's upper-case enum
    model_turn, answer = second["contents"][1:]
    assert model_turn["role"] == "model"
    assert model_turn["parts"][0]["functionCall"]["name"] == "weather"
    assert model_turn["parts"][0]["functionCall"] == {"name": "weather", "args": {"city": "Paris"}}
    assert answer["role"] == "user"
    response = answer["parts"][0]["functionResponse"]
    assert response == {"name": "weather", "response": {"result": "sunny"}}  # no invented id


@pytest.mark.parametrize("served", ["llm_c"], indirect=True)
def test_llm_c_stream_embeddings_and_error_body(served) -> None:
    ai, server, key = served
    with ai.stream([{"role": "user", "content": PROMPT}]) as stream:
        assert "".join(stream) == TEXT
    sent = server.received[0]
    assert sent.path == f"/v1beta/models/{MODELS['llm_c']}:streamGenerateContent"
    assert sent.query == {"alt": ["sse"]}
    ai.embed(["one", "two"])
    sent = server.received[1]
    assert sent.path == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert sent.headers["x-goog-api-key"] == key
    assert [r["content"]["parts"] for r in sent.body["requests"]] == [
        [{"text": "one"}],
        [{"text": "two"}],
    ]
    assert all(r["model"] == "models/gemini-embedding-001" for r in sent.body["requests"])
    server.failures.append((429, error_c(429, "Quota exceeded", "RESOURCE_EXHAUSTED")))
    server.failures.append((403, error_c(403, "Permission denied", "PERMISSION_DENIED")))
    with pytest.raises(AIProviderError) as caught:
        ai.complete(PROMPT)
    assert (caught.value.status, caught.value.kind) == (403, "PERMISSION_DENIED")
    assert caught.value.detail == "Permission denied"
    assert len(server.received) == 4  # the 429 was retried, the 403 was not


def test_every_request_body_is_json() -> None:
    for adapter in ("llm_a", "llm_b", "llm_c", "llm_d"):
        key = new_key(adapter)
        server = FAKES[adapter](key).start()
        ai, container = open_ai(adapter, server, key)
        try:
            ai.complete(PROMPT)
            assert json.loads(server.received[0].raw) == server.received[0].body
        finally:
            container.close()
            server.stop()
