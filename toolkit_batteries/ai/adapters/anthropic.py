"""Anthropic's Messages API (adapter ``anthropic``, canonical ``llm_a``, the default), official SDK.

Wire format (the provider's public API reference), as the ``anthropic`` SDK sends it:

* ``POST {base_url}/v1/messages`` with ``x-api-key: <key>`` and
  ``anthropic-version: 2023-06-01``; body ``{"model", "max_tokens", "messages": [{"role":
  "user"|"assistant", "content": str | [blocks]}], "system"?, "tools"?: [{"name",
  "description", "input_schema"}], "temperature"?}``.
* Answer ``{"id", "type": "message", "role": "assistant", "content": [{"type": "text",
  "text"} | {"type": "tool_use", "id", "name", "input"}], "model", "stop_reason",
  "usage": {"input_tokens", "output_tokens"}}``.
* Errors: ``{"type": "error", "error": {"type": "rate_limit_error", "message"}}``.
* Streaming (``"stream": true``): server-sent events ``message_start`` (input tokens),
  ``content_block_delta`` (``text_delta``), ``message_delta`` (stop reason, output
  tokens), ``message_stop``.

The provider has no embeddings API: :meth:`embed` raises ``AIUnsupportedError``.
Tool results go back as a ``user`` message of ``tool_result`` blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.core.outbound import OutboundBlockedError
from toolkit_batteries.core.tracing import traced

from ..base import ChatResult, ToolCall, Usage
from ._common import ProviderAI, Settings, provider_turns

try:
    import anthropic
    import httpx2

    from ._httpx2 import guarded_client2
except ImportError:  # pragma: no cover - the ai extra is part of dev installs
    raise MissingExtraError("ai", "llm_a", "ai", "anthropic") from None

__all__ = ["DEFAULT_BASE_URL", "AnthropicAI"]

DEFAULT_BASE_URL = "https://api.anthropic.com"


@traced("_chat", "_open_stream")
class AnthropicAI(ProviderAI):
    """Chat and streaming over the Messages API."""

    adapter_name = "llm_a"
    default_model = "claude-sonnet-4-5"
    default_base_url = DEFAULT_BASE_URL
    #: The SDK's errors, the HTTP client's while a stream is read, and the guard's refusal
    #: (which one SDK wraps and the other lets through).
    failures = (anthropic.AnthropicError, httpx2.HTTPError, OutboundBlockedError)

    def _connect(self, settings: Settings) -> Any:
        return anthropic.Anthropic(
            api_key=settings.api_key,
            base_url=settings.base_url,
            timeout=settings.timeout,
            max_retries=0,  # retries are the resilience policy's
            http_client=guarded_client2(settings),
        )

    # ------------------------------------------------------------------ translation

    def _params(self, request: dict[str, Any]) -> dict[str, Any]:
        system = [m["content"] for m in request["messages"] if m["role"] == "system"]
        params: dict[str, Any] = {
            "model": request["model"],
            "max_tokens": request["max_tokens"],
            "messages": _messages(request["messages"]),
        }
        if system:
            params["system"] = "\n\n".join(system)
        if request["tools"]:
            params["tools"] = [
                {
                    "name": t["name"],
                    "description": t["description"],
                    "input_schema": t["parameters"],
                }
                for t in request["tools"]
            ]
        if request["temperature"] is not None:
            # The current SDK no longer declares it; the body key is the API reference's.
            params["extra_body"] = {"temperature": request["temperature"]}
        return params

    def _body(self, exc: BaseException) -> tuple[Any, Any]:
        body = getattr(exc, "body", None)
        error = body.get("error") if isinstance(body, dict) else None
        return (error.get("type"), error.get("message")) if isinstance(error, dict) else ("", "")

    # ------------------------------------------------------------------ primitives

    def _chat(self, request: dict[str, Any]) -> ChatResult:
        message = self._guarded(self._client.messages.create, **self._params(request))
        texts, calls = [], []
        for block in message.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                calls.append(ToolCall(block.id, block.name, dict(block.input or {})))
        usage = message.usage
        return ChatResult(
            text="".join(texts),
            tool_calls=tuple(calls),
            usage=Usage(usage.input_tokens or 0, usage.output_tokens or 0),
            model=message.model or request["model"],
            stop_reason=message.stop_reason or "",
        )

    def _open_stream(
        self, request: dict[str, Any]
    ) -> tuple[Iterator[tuple[str, Any]], Callable[[], None]]:
        params = self._params(request)
        return self._stream_of(self._events, self._client.messages.create, **params, stream=True)

    def _events(self, stream: Any) -> Iterator[tuple[str, Any]]:
        input_tokens = output_tokens = 0
        for event in stream:
            kind = event.type
            if kind == "content_block_delta":
                if getattr(event.delta, "type", "") == "text_delta":
                    yield "text", event.delta.text
            elif kind == "message_start":
                input_tokens = event.message.usage.input_tokens or 0
                output_tokens = event.message.usage.output_tokens or 0
                yield "model", event.message.model
            elif kind == "message_delta":
                output_tokens = event.usage.output_tokens or output_tokens
                if event.delta.stop_reason:
                    yield "stop", event.delta.stop_reason
        yield "usage", Usage(input_tokens, output_tokens)


def _messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the neutral messages as Messages API turns (system text goes to ``system``)."""
    return provider_turns(messages, _tool_result, _turn, "content")


def _tool_result(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": message["tool_call_id"],
        "content": message["content"],
    }


def _turn(message: dict[str, Any]) -> dict[str, Any]:
    if message["role"] == "assistant" and message.get("tool_calls"):
        blocks: list[dict[str, Any]] = []
        if message["content"]:
            blocks.append({"type": "text", "text": message["content"]})
        blocks += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
            for c in message["tool_calls"]
        ]
        return {"role": "assistant", "content": blocks}
    return {"role": message["role"], "content": message["content"]}
