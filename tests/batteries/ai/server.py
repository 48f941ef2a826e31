"""Local stand-ins for the four providers, on 127.0.0.1, speaking their documented wire formats.

Each fake records every request it receives (:attr:`FakeProvider.received`: method, path,
query, headers, decoded JSON body) and answers deterministically:

* a chat request that declares tools and ends with a user turn gets one tool call
  (``weather`` with ``{"city": "Paris"}``), any other chat request the text
  ``"Hello, world!"`` (streamed as the deltas ``Hello``, ``, ``, ``world``, ``!``);
* usage is always 11 input and 7 output tokens;
* an embedding request gets, for the text at position ``i``, ``[len(text), i, 0.5]``.

A wrong or missing key gets the provider's 401 error body. :attr:`FakeProvider.failures`
is a queue of ``(status, body)`` answers served before the normal ones (errors, retries).

* :class:`FakeMessagesAPI` (``llm_a``): ``POST /v1/messages``, the key as ``x-api-key``
  or ``Authorization: Bearer`` (the official SDK's current choice) and a dated
  ``anthropic-version``; ``{"type": "error", "error": {"type", "message"}}``;
  SSE ``event:``/``data:`` pairs (``message_start`` ... ``message_stop``).
* :class:`FakeChatCompletionsAPI` (``llm_b``, ``llm_d``): ``POST /v1/chat/completions`` and
  ``/v1/embeddings``, ``Authorization: Bearer``; ``{"error": {"message", "type", "param",
  "code"}}``; SSE ``data:`` chunks, a usage chunk, ``data: [DONE]``.
* :class:`FakeGenerativeLanguageAPI` (``llm_c``): ``POST /v1beta/models/<m>:generateContent``,
  ``:streamGenerateContent?alt=sse``, ``:batchEmbedContents``, ``x-goog-api-key``;
  ``{"error": {"code", "message", "status"}}``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support.provider_server import Answer, ProviderServer, Received

TEXT_DELTAS = ("Hello", ", ", "world", "!")
TEXT = "".join(TEXT_DELTAS)
INPUT_TOKENS, OUTPUT_TOKENS = 11, 7
TOOL_ARGS = {"city": "Paris"}


class FakeProvider(ProviderServer):
    """Base of the LLM fakes: every request body is a JSON object (``application/json``)."""

    def required(self, request: Received) -> tuple[str, ...]:
        """Return the body fields the endpoint of ``request`` requires."""
        return ()

    def malformed(self, request: Received) -> Answer | None:
        refusal = super().malformed(request)
        if refusal is not None:
            return refusal
        body = request.body if isinstance(request.body, dict) else {}
        missing = [name for name in self.required(request) if body.get(name) in (None, "", [])]
        if missing:
            return self.bad_request(f"{missing[0]}: Field required")
        return None


# ---------------------------------------------------------------------- llm_a


class FakeMessagesAPI(FakeProvider):
    """The Messages API."""

    def authorized(self, headers: dict[str, str]) -> bool:
        """Accept the key as ``x-api-key`` (the API reference) or ``Authorization: Bearer`` (what
        the current official SDK sends), and a dated ``anthropic-version``."""
        keyed = headers.get("x-api-key") == self.key or (
            headers.get("authorization") == f"Bearer {self.key}"
        )
        return keyed and bool(
            re.fullmatch(r"\d{4}-\d{2}-\d{2}", headers.get("anthropic-version", ""))
        )

    def unauthorized(self) -> tuple[int, Any]:
        return 401, error_a("authentication_error", "invalid x-api-key")

    def bad_request(self, message: str) -> Answer:
        return 400, error_a("invalid_request_error", message)

    def required(self, request: Received) -> tuple[str, ...]:
        return ("model", "max_tokens", "messages") if request.path == "/v1/messages" else ()

    def answer(self, handler: Any, request: Received) -> None:
        if request.path != "/v1/messages":
            return handler.send_json(404, error_a("not_found_error", "Not found"))
        body = request.body or {}
        model = body.get("model", "")
        messages = body.get("messages") or []
        wants_tool = bool(body.get("tools")) and isinstance(messages[-1].get("content"), str)
        usage = {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS}
        if body.get("stream"):
            start = {
                "type": "message_start",
                "message": {
                    "id": "msg_01",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": model,
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": 1},
                },
            }
            events = [sse_a("message_start", start)]
            events.append(
                sse_a(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            events.append(sse_a("ping", {"type": "ping"}))
            for delta in TEXT_DELTAS:
                events.append(
                    sse_a(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": 0,
                            "delta": {"type": "text_delta", "text": delta},
                        },
                    )
                )
            events.append(sse_a("content_block_stop", {"type": "content_block_stop", "index": 0}))
            events.append(
                sse_a(
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                        "usage": {"output_tokens": OUTPUT_TOKENS},
                    },
                )
            )
            events.append(sse_a("message_stop", {"type": "message_stop"}))
            return handler.send_events(events)
        if wants_tool:
            content = [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_01", "name": "weather", "input": TOOL_ARGS},
            ]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": TEXT}], "end_turn"
        handler.send_json(
            200,
            {
                "id": "msg_01",
                "type": "message",
                "role": "assistant",
                "content": content,
                "model": model,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": usage,
            },
        )


def error_a(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def sse_a(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


# ---------------------------------------------------------------------- llm_b, llm_d


class FakeChatCompletionsAPI(FakeProvider):
    """Chat Completions and Embeddings (the first-party API and compatible servers)."""

    base_path = "/v1"

    def authorized(self, headers: dict[str, str]) -> bool:
        return headers.get("authorization") == f"Bearer {self.key}"

    def unauthorized(self) -> tuple[int, Any]:
        return 401, error_b(
            "Incorrect API key provided.", "invalid_request_error", "invalid_api_key"
        )

    def bad_request(self, message: str) -> Answer:
        return 400, error_b(message, "invalid_request_error", None)

    def required(self, request: Received) -> tuple[str, ...]:
        if request.path == "/v1/embeddings":
            return ("model", "input")
        return ("model", "messages") if request.path == "/v1/chat/completions" else ()

    def answer(self, handler: Any, request: Received) -> None:
        body = request.body or {}
        if request.path == "/v1/embeddings":
            data = [
                {"object": "embedding", "index": i, "embedding": [float(len(t)), float(i), 0.5]}
                for i, t in enumerate(body.get("input") or [])
            ]
            return handler.send_json(
                200,
                {
                    "object": "list",
                    "data": list(reversed(data)),  # answers in any order carry their index
                    "model": body.get("model", ""),
                    "usage": {"prompt_tokens": INPUT_TOKENS, "total_tokens": INPUT_TOKENS},
                },
            )
        if request.path != "/v1/chat/completions":
            return handler.send_json(404, error_b("Not found", "invalid_request_error", None))
        model = body.get("model", "")
        messages = body.get("messages") or []
        wants_tool = bool(body.get("tools")) and messages[-1].get("role") == "user"
        usage = {
            "prompt_tokens": INPUT_TOKENS,
            "completion_tokens": OUTPUT_TOKENS,
            "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS,
        }
        if body.get("stream"):
            events = []
            for index, delta in enumerate(TEXT_DELTAS):
                piece: dict[str, Any] = {"content": delta}
                if index == 0:
                    piece["role"] = "assistant"
                events.append(
                    sse_b(chunk_b(model, [{"index": 0, "delta": piece, "finish_reason": None}]))
                )
            events.append(
                sse_b(chunk_b(model, [{"index": 0, "delta": {}, "finish_reason": "stop"}]))
            )
            if (body.get("stream_options") or {}).get("include_usage"):
                events.append(sse_b({**chunk_b(model, []), "usage": usage}))
            events.append("data: [DONE]\n\n")
            return handler.send_events(events)
        if wants_tool:
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_01",
                        "type": "function",
                        "function": {"name": "weather", "arguments": json.dumps(TOOL_ARGS)},
                    }
                ],
            }
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": TEXT}, "stop"
        handler.send_json(
            200,
            {
                "id": "chatcmpl-01",
                "object": "chat.completion",
                "created": 1700000000,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            },
        )


def error_b(message: str, kind: str, code: Any) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def chunk_b(model: str, choices: list[Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-01",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": model,
        "choices": choices,
    }


def sse_b(data: Any) -> str:
    return f"data: {json.dumps(data)}\n\n"


# ---------------------------------------------------------------------- llm_c


class FakeGenerativeLanguageAPI(FakeProvider):
    """The generative-language REST API (v1beta)."""

    def authorized(self, headers: dict[str, str]) -> bool:
        return headers.get("x-goog-api-key") == self.key

    def unauthorized(self) -> tuple[int, Any]:
        return 400, error_c(
            400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"
        )

    def bad_request(self, message: str) -> Answer:
        return 400, error_c(400, message, "INVALID_ARGUMENT")

    def required(self, request: Received) -> tuple[str, ...]:
        method = request.path.rpartition(":")[2]
        return ("requests",) if method == "batchEmbedContents" else ("contents",)

    def malformed(self, request: Received) -> Answer | None:
        refusal = super().malformed(request)
        streams = request.path.endswith(":streamGenerateContent")
        if refusal is None and streams and request.query.get("alt") != ["sse"]:
            # Without alt=sse the API streams one JSON array, which no SSE reader parses.
            return self.bad_request("streamGenerateContent is served here with alt=sse only")
        return refusal

    def answer(self, handler: Any, request: Received) -> None:
        body = request.body or {}
        prefix, _, method = request.path.rpartition(":")
        model = prefix.removeprefix("/v1beta/models/")
        if not prefix.startswith("/v1beta/models/"):
            return handler.send_json(404, error_c(404, "Not found", "NOT_FOUND"))
        if method == "batchEmbedContents":
            embeddings = []
            for request_item in body.get("requests") or []:
                text = "".join(p.get("text", "") for p in request_item["content"]["parts"])
                embeddings.append({"values": [float(len(text)), float(len(embeddings)), 0.5]})
            return handler.send_json(200, {"embeddings": embeddings})
        usage = {
            "promptTokenCount": INPUT_TOKENS,
            "candidatesTokenCount": OUTPUT_TOKENS,
            "totalTokenCount": INPUT_TOKENS + OUTPUT_TOKENS,
        }
        if method == "streamGenerateContent":
            events = []
            for index, delta in enumerate(TEXT_DELTAS):
                candidate: dict[str, Any] = {
                    "content": {"role": "model", "parts": [{"text": delta}]},
                    "index": 0,
                }
                chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
                if index == len(TEXT_DELTAS) - 1:
                    candidate["finishReason"] = "STOP"
                    chunk["usageMetadata"] = usage
                events.append(f"data: {json.dumps(chunk)}\r\n\r\n")
            return handler.send_events(events)
        if method != "generateContent":
            return handler.send_json(404, error_c(404, "Not found", "NOT_FOUND"))
        contents = body.get("contents") or []
        last = contents[-1]["parts"] if contents else []
        wants_tool = bool(body.get("tools")) and any("text" in p for p in last)
        if wants_tool:
            parts = [{"functionCall": {"name": "weather", "args": TOOL_ARGS}}]
        else:
            parts = [{"text": TEXT}]
        handler.send_json(
            200,
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": parts},
                        "finishReason": "STOP",
                        "index": 0,
                    }
                ],
                "usageMetadata": usage,
                "modelVersion": model,
            },
        )


def error_c(code: int, message: str, status: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


#: The fake each adapter talks to.
FAKES: dict[str, type[FakeProvider]] = {
    "llm_a": FakeMessagesAPI,
    "llm_b": FakeChatCompletionsAPI,
    "llm_c": FakeGenerativeLanguageAPI,
    "llm_d": FakeChatCompletionsAPI,
}
