"""Google Gemini (adapter ``gemini``, canonical ``llm_c``): Generative Language API, SDK.

Wire format (the provider's public API reference), as the ``google-genai`` SDK sends it
on the guarded ``httpx2`` client it accepts (its default client package, leaner per call
than ``httpx``; see ``_httpx2``):

* ``POST {base_url}/v1beta/models/{model}:generateContent`` with
  ``x-goog-api-key: <key>``; body ``{"contents": [{"role": "user"|"model", "parts":
  [{"text"} | {"functionCall": {"name", "args"}} | {"functionResponse": {"name",
  "response"}}]}], "systemInstruction"?: {"parts": [{"text"}]}, "tools"?:
  [{"functionDeclarations": [{"name", "description", "parameters"}]}],
  "generationConfig": {"maxOutputTokens", "temperature"?}}``.
* Answer ``{"candidates": [{"content": {"role": "model", "parts": [...]}, "finishReason"}],
  "usageMetadata": {"promptTokenCount", "candidatesTokenCount", "totalTokenCount"},
  "modelVersion"}``.
* Streaming: ``POST .../models/{model}:streamGenerateContent?alt=sse``, server-sent
  ``data: <GenerateContentResponse>`` events, the last one with the usage.
* Embeddings: ``POST .../models/{model}:batchEmbedContents`` ``{"requests": [{"model":
  "models/{model}", "content": {"parts": [{"text"}]}}]}`` -> ``{"embeddings": [{"values"}]}``
  (the API reports no token usage for embeddings).
* Errors: ``{"error": {"code", "message", "status": "RESOURCE_EXHAUSTED"}}``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.core.outbound import OutboundBlockedError
from toolkit_batteries.core.tracing import traced

from ..base import ChatResult, Embeddings, ToolCall, Usage
from ._common import ProviderAI, Settings, provider_turns

try:
    import httpx2
    from google import genai
    from google.genai import errors as genai_errors

    from ._httpx2 import guarded_client2
except ImportError:  # pragma: no cover - the ai extra is part of dev installs
    raise MissingExtraError("ai", "llm_c", "ai", "google-genai") from None

__all__ = ["DEFAULT_BASE_URL", "GeminiAI"]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"
#: Prefix of the ids given to function calls the API answered without one; such ids are
#: not sent back (the API matches a function response by name).
_LOCAL = "llm_c:"


@traced("_chat", "_open_stream", "_embed")
class GeminiAI(ProviderAI):
    """Chat, streaming and embeddings over the generateContent and embedding APIs."""

    adapter_name = "llm_c"
    default_model = "gemini-2.5-flash"
    default_embedding_model = "gemini-embedding-001"
    default_base_url = DEFAULT_BASE_URL
    #: The SDK's errors, the HTTP client's and the guard's refusal.
    failures = (genai_errors.APIError, httpx2.HTTPError, OutboundBlockedError)

    def _connect(self, settings: Settings) -> Any:
        self._http = guarded_client2(settings)
        return genai.Client(
            vertexai=False,  # never switched to another API by GOOGLE_GENAI_USE_VERTEXAI
            api_key=settings.api_key,
            http_options={
                "base_url": settings.base_url + "/",
                "api_version": API_VERSION,
                "timeout": int(settings.timeout * 1000),
                "httpx_client": self._http,
            },
        )

    def close(self) -> None:
        self._http.close()

    # ------------------------------------------------------------------ translation

    def _params(self, request: dict[str, Any]) -> dict[str, Any]:
        config: dict[str, Any] = {"max_output_tokens": request["max_tokens"]}
        system = [m["content"] for m in request["messages"] if m["role"] == "system"]
        if system:
            config["system_instruction"] = "\n\n".join(system)
        if request["tools"]:
            config["tools"] = [{"function_declarations": request["tools"]}]
            config["automatic_function_calling"] = {"disable": True}
        if request["temperature"] is not None:
            config["temperature"] = request["temperature"]
        return {
            "model": request["model"],
            "contents": _contents(request["messages"]),
            "config": config,
        }

    def _body(self, exc: BaseException) -> tuple[Any, Any]:
        if isinstance(exc, genai_errors.APIError):
            return exc.status, exc.message
        return "", ""

    # ------------------------------------------------------------------ primitives

    def _chat(self, request: dict[str, Any]) -> ChatResult:
        answer = self._guarded(self._client.models.generate_content, **self._params(request))
        texts: list[str] = []
        calls: list[ToolCall] = []
        candidate = answer.candidates[0] if answer.candidates else None
        parts = candidate.content.parts if candidate and candidate.content else None
        for index, part in enumerate(parts or ()):
            if part.text and not part.thought:
                texts.append(part.text)
            if part.function_call is not None:
                call = part.function_call
                name = call.name or ""
                calls.append(
                    ToolCall(call.id or f"{_LOCAL}{index}:{name}", name, dict(call.args or {}))
                )
        return ChatResult(
            text="".join(texts),
            tool_calls=tuple(calls),
            usage=_usage(answer.usage_metadata),
            model=answer.model_version or request["model"],
            stop_reason=_reason(candidate.finish_reason if candidate else None),
        )

    def _open_stream(
        self, request: dict[str, Any]
    ) -> tuple[Iterator[tuple[str, Any]], Callable[[], None]]:
        call = self._client.models.generate_content_stream
        return self._stream_of(self._events, call, **self._params(request))

    def _events(self, chunks: Any) -> Iterator[tuple[str, Any]]:
        usage = Usage()
        for chunk in chunks:
            if chunk.model_version:
                yield "model", chunk.model_version
            candidate = chunk.candidates[0] if chunk.candidates else None
            if candidate is not None and candidate.content is not None:
                for part in candidate.content.parts or ():
                    if part.text and not part.thought:
                        yield "text", part.text
            if candidate is not None and candidate.finish_reason:
                yield "stop", _reason(candidate.finish_reason)
            if chunk.usage_metadata is not None:
                usage = _usage(chunk.usage_metadata)
        yield "usage", usage

    def _embed(self, texts: list[str], model: str) -> Embeddings:
        answer = self._guarded(self._client.models.embed_content, model=model, contents=texts)
        vectors = [list(item.values or ()) for item in answer.embeddings or ()]
        return Embeddings(vectors=vectors, usage=Usage(), model=model)


def _usage(metadata: Any) -> Usage:
    if metadata is None:
        return Usage()
    return Usage(
        int(metadata.prompt_token_count or 0),
        int(metadata.candidates_token_count or 0) + int(metadata.thoughts_token_count or 0),
    )


def _reason(reason: Any) -> str:
    if reason is None:
        return ""
    return str(getattr(reason, "value", reason))


def _contents(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the neutral messages as ``contents`` turns (system text goes to the config)."""
    return provider_turns(messages, _function_response, _turn, "parts")


def _function_response(message: dict[str, Any]) -> dict[str, Any]:
    answer = {"name": message["name"], "response": {"result": message["content"]}}
    return {"function_response": _with_id(answer, message["tool_call_id"])}


def _turn(message: dict[str, Any]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if message["content"]:
        parts.append({"text": message["content"]})
    for call in message.get("tool_calls", ()):
        parts.append(
            {"function_call": _with_id({"name": call.name, "args": call.arguments}, call.id)}
        )
    return {"role": "model" if message["role"] == "assistant" else "user", "parts": parts}


def _with_id(part: dict[str, Any], call_id: str) -> dict[str, Any]:
    if call_id and not call_id.startswith(_LOCAL):
        part["id"] = call_id
    return part
