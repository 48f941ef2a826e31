"""OpenAI (adapter ``openai``, canonical ``llm_b``): Chat Completions and Embeddings, official SDK.

Wire format (the provider's public API reference), as the ``openai`` SDK sends it:

* ``POST {base_url}/chat/completions`` (the base URL ends in ``/v1``) with
  ``Authorization: Bearer <key>``; body ``{"model", "messages": [{"role", "content",
  "tool_calls"?: [{"id", "type": "function", "function": {"name", "arguments": "<json>"}}],
  "tool_call_id"?}], "tools"?: [{"type": "function", "function": {"name", "description",
  "parameters"}}], "max_completion_tokens", "temperature"?}``.
* Answer ``{"id", "object": "chat.completion", "model", "choices": [{"index", "message":
  {"role", "content", "tool_calls"?}, "finish_reason"}], "usage": {"prompt_tokens",
  "completion_tokens", "total_tokens"}}``.
* Streaming (``"stream": true, "stream_options": {"include_usage": true}``): server-sent
  ``data: <chat.completion.chunk>`` lines (``choices[0].delta.content``), a last chunk with
  empty ``choices`` and the ``usage``, then ``data: [DONE]``.
* ``POST {base_url}/embeddings`` ``{"model", "input": [..], "encoding_format": "float"}`` ->
  ``{"object": "list", "data": [{"index", "embedding"}], "usage": {"prompt_tokens"}}``.
* Errors: ``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.core.outbound import OutboundBlockedError
from toolkit_batteries.core.tracing import traced

from ..base import ChatResult, Embeddings, ToolCall, Usage
from ._common import ProviderAI, Settings

try:
    import httpx2
    import openai

    from ._httpx2 import guarded_client2
except ImportError:  # pragma: no cover - the ai extra is part of dev installs
    raise MissingExtraError("ai", "llm_b", "ai", "openai") from None

__all__ = ["DEFAULT_BASE_URL", "OpenAIAI"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


@traced("_chat", "_open_stream", "_embed")
class OpenAIAI(ProviderAI):
    """Chat, streaming and embeddings over the Chat Completions and Embeddings APIs."""

    adapter_name = "llm_b"
    default_model = "gpt-4o-mini"
    default_embedding_model = "text-embedding-3-small"
    #: The body key of the output bound (OpenAI-compatible servers know ``max_tokens``).
    max_tokens_key: ClassVar[str] = "max_completion_tokens"
    default_base_url: ClassVar[str] = DEFAULT_BASE_URL
    #: The SDK's errors, the HTTP client's while a stream is read, and the guard's refusal.
    failures = (openai.OpenAIError, httpx2.HTTPError, OutboundBlockedError)

    def _connect(self, settings: Settings) -> Any:
        return openai.OpenAI(
            api_key=settings.api_key,
            base_url=settings.base_url,
            organization=None,
            project=None,
            timeout=settings.timeout,
            max_retries=0,  # retries are the resilience policy's
            http_client=guarded_client2(settings),
        )

    # ------------------------------------------------------------------ translation

    def _params(self, request: dict[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": request["model"],
            "messages": [_message(m) for m in request["messages"]],
            self.max_tokens_key: request["max_tokens"],
        }
        if request["tools"]:
            params["tools"] = [{"type": "function", "function": t} for t in request["tools"]]
        if request["temperature"] is not None:
            params["temperature"] = request["temperature"]
        return params

    def _body(self, exc: BaseException) -> tuple[Any, Any]:
        body = getattr(exc, "body", None)
        error = body.get("error", body) if isinstance(body, dict) else None
        if not isinstance(error, dict):
            return "", ""
        return error.get("type") or error.get("code"), error.get("message")

    # ------------------------------------------------------------------ primitives

    def _chat(self, request: dict[str, Any]) -> ChatResult:
        answer = self._guarded(self._client.chat.completions.create, **self._params(request))
        choice = answer.choices[0] if answer.choices else None
        message = choice.message if choice is not None else None
        calls = tuple(
            ToolCall(call.id, call.function.name, _arguments(call.function.arguments))
            for call in (getattr(message, "tool_calls", None) or ())
            if getattr(call, "function", None) is not None
        )
        usage = answer.usage
        return ChatResult(
            text=(message.content if message is not None else "") or "",
            tool_calls=calls,
            usage=Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0)
            if usage
            else Usage(),
            model=answer.model or request["model"],
            stop_reason=(choice.finish_reason if choice is not None else "") or "",
        )

    def _open_stream(
        self, request: dict[str, Any]
    ) -> tuple[Iterator[tuple[str, Any]], Callable[[], None]]:
        return self._stream_of(
            self._events,
            self._client.chat.completions.create,
            **self._params(request),
            stream=True,
            stream_options={"include_usage": True},
        )

    def _events(self, stream: Any) -> Iterator[tuple[str, Any]]:
        usage = Usage()
        for chunk in stream:
            if chunk.model:
                yield "model", chunk.model
            for choice in chunk.choices or ():
                if choice.delta is not None and choice.delta.content:
                    yield "text", choice.delta.content
                if choice.finish_reason:
                    yield "stop", choice.finish_reason
            if chunk.usage is not None:
                usage = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
        yield "usage", usage

    def _embed(self, texts: list[str], model: str) -> Embeddings:
        answer = self._guarded(
            self._client.embeddings.create, model=model, input=texts, encoding_format="float"
        )
        ordered = sorted(answer.data, key=lambda item: item.index)
        usage = answer.usage
        return Embeddings(
            vectors=[list(item.embedding) for item in ordered],
            usage=Usage(usage.prompt_tokens or 0, 0) if usage else Usage(),
            model=answer.model or model,
        )


def _message(message: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message["role"], "content": message["content"]}
    if message.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in message["tool_calls"]
        ]
    if message["role"] == "tool":
        out["tool_call_id"] = message["tool_call_id"]
    return out


def _arguments(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
