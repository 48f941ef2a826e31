"""The ai service: completions, chat with tools, embeddings and streaming, one interface.

::

    ai = services.ai()
    answer = ai.complete("Summarise this ticket: ...")         # ChatResult
    print(answer.text, answer.usage.input_tokens, answer.usage.output_tokens)

    reply = ai.chat(
        [{"role": "user", "content": "Weather in Paris?"}],
        tools=[{"name": "weather", "description": "current weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
    )
    for call in reply.tool_calls:                              # ToolCall(id, name, arguments)
        ...

    vectors = ai.embed(["first text", "second text"]).vectors   # list[list[float]]

    with ai.stream([{"role": "user", "content": "Tell a story"}]) as stream:
        for delta in stream:                                   # str pieces, as they arrive
            print(delta, end="")
    print(stream.usage)                                        # known once the stream ended

Messages use one neutral shape whatever the provider: ``{"role": "system" | "user" |
"assistant" | "tool", "content": str}``; an assistant message may carry ``tool_calls``
(a list of :class:`ToolCall` or ``{"id", "name", "arguments"}``) and a ``tool`` message
answers one with ``tool_call_id`` (and ``name``). Each adapter translates it to its
provider's wire format, so switching provider is a configuration change.

Every remote call runs under the resilience battery's :class:`Policy` (retry layer):
connection errors, time-outs, 408, 409, 429 and 5xx answers are tried again with its
backoff (3 attempts, 50 ms doubling to 2 s by default; :meth:`AI.configure` changes it);
other errors are raised at once. A stream is retried only until its first event arrived.
The SDKs' own retries are off, so there is one retry policy, not two stacked.

Errors name the service, instance and adapter, never the key, the prompt or the URL.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError, ToolkitError

__all__ = [
    "AI",
    "AIError",
    "AIProviderError",
    "AIUnsupportedError",
    "ChatResult",
    "ChatStream",
    "Embeddings",
    "ToolCall",
    "Usage",
    "normalize_messages",
    "normalize_tools",
]

#: Request timeout used when the ``timeout`` option is 0.
DEFAULT_TIMEOUT = 60.0
#: ``max_tokens`` sent when a call names none (the first provider requires one).
DEFAULT_MAX_TOKENS = 1024
#: HTTP answers worth another attempt.
RETRYABLE_STATUSES = frozenset({408, 409, 429})
_ROLES = frozenset({"system", "user", "assistant", "tool"})


class AIError(ToolkitError):
    """Base of the ai battery's runtime errors; never holds a key or a prompt."""

    code = "ai_error"


class AIProviderError(AIError):
    """The provider refused or failed a call (an HTTP error, a time-out, a lost connection).

    ``status`` is the HTTP status (``None`` without an answer), ``kind`` the provider's
    error type (``rate_limit_error``, ``RESOURCE_EXHAUSTED``, ``timeout``,
    ``connection``), ``retryable`` whether another attempt may succeed, ``retry_after``
    the seconds the provider's ``Retry-After`` asked for (``None``). ``detail`` is the
    provider's own message with the key removed; it is not part of ``str(exc)``, because
    providers quote request content in it.
    """

    code = "provider_error"

    def __init__(
        self,
        instance: str,
        adapter: str,
        *,
        status: int | None,
        kind: str,
        retryable: bool,
        detail: str = "",
        retry_after: float | None = None,
    ) -> None:
        self.instance = instance
        self.adapter = adapter
        self.status = status
        self.kind = kind
        self.retryable = retryable
        self.detail = detail
        #: Seconds the provider asked to wait (its ``Retry-After``); the retry honours it.
        self.retry_after = retry_after
        answered = f"answered HTTP {status}" if status is not None else "failed"
        super().__init__(f"ai.{instance}: the {adapter} provider {answered} ({kind})")


class AIUnsupportedError(AIError, NotImplementedError):
    """The adapter's provider has no such operation (``llm_a`` has no embeddings API)."""

    code = "unimplemented"

    def __init__(self, instance: str, adapter: str, operation: str) -> None:
        super().__init__(f"ai.{instance}: the {adapter} provider has no {operation} API")


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens a call consumed, as the provider counted them."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Return input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call the model asked for; ``arguments`` is the decoded JSON object."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ChatResult:
    """A chat or completion answer: text, requested tool calls, usage."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    model: str = ""
    #: The provider's reason, as it names it (``end_turn``, ``stop``, ``STOP``, ``tool_use``).
    stop_reason: str = ""


@dataclass(frozen=True, slots=True)
class Embeddings:
    """One vector per input text, in input order."""

    vectors: list[list[float]]
    usage: Usage = Usage()
    model: str = ""


class ChatStream:
    """An iterator of text deltas; ``usage``, ``text`` and ``stop_reason`` once it ended.

    Use it as a context manager (or exhaust it) so the HTTP answer is closed; closing it
    early stops reading and releases the connection.
    """

    def __init__(self, events: Iterator[tuple[str, Any]], close: Callable[[], None]) -> None:
        self._events = events
        self._close = close
        self._parts: list[str] = []
        self.usage = Usage()
        self.stop_reason = ""
        self.model = ""
        self.done = False

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        for kind, value in self._events:
            if kind == "text":
                if value:
                    self._parts.append(value)
                    return value
            elif kind == "usage":
                self.usage = value
            elif kind == "stop":
                self.stop_reason = value
            elif kind == "model":
                self.model = value
        self.done = True
        self.close()
        raise StopIteration

    @property
    def text(self) -> str:
        """Return the text received so far."""
        return "".join(self._parts)

    def close(self) -> None:
        """Stop reading and release the connection (idempotent)."""
        close, self._close = self._close, _nothing
        close()

    def __enter__(self) -> ChatStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "done" if self.done else "open"
        return f"<ChatStream {state} {len(self._parts)} deltas>"


def _nothing() -> None:
    return None


def normalize_tools(tools: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """Check tool declarations: ``{"name", "description"?, "parameters"?}`` each."""
    found: list[dict[str, Any]] = []
    for tool in tools or ():
        if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
            raise ValueError("ai: every tool needs a string name")
        parameters = tool.get("parameters") or {"type": "object", "properties": {}}
        if not isinstance(parameters, Mapping):
            raise ValueError("ai: a tool's parameters must be a JSON schema object")
        found.append(
            {
                "name": tool["name"],
                "description": str(tool.get("description") or ""),
                "parameters": dict(parameters),
            }
        )
    return found


def normalize_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Check messages and return copies with tool calls as :class:`ToolCall`.

    Raises ``ValueError`` naming the message's position, never its content.
    """
    found: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in _ROLES:
            raise ValueError(f"ai: message {index} needs a role of {sorted(_ROLES)}")
        content = message.get("content")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise ValueError(f"ai: message {index} content must be a string")
        item: dict[str, Any] = {"role": message["role"], "content": content}
        calls = message.get("tool_calls") or ()
        if calls:
            item["tool_calls"] = [_tool_call(call, index) for call in calls]
        if message["role"] == "tool":
            if not isinstance(message.get("tool_call_id"), str):
                raise ValueError(f"ai: tool message {index} needs a tool_call_id")
            item["tool_call_id"] = message["tool_call_id"]
            item["name"] = str(message.get("name") or "")
        found.append(item)
    if not found:
        raise ValueError("ai: at least one message is required")
    names = {c.id: c.name for m in found for c in m.get("tool_calls", ())}
    for item in found:  # a tool answer's name, from the call it answers (the third API wants it)
        if item["role"] == "tool" and not item["name"]:
            item["name"] = names.get(item["tool_call_id"], "")
    return found


def _tool_call(call: Any, index: int) -> ToolCall:
    if isinstance(call, ToolCall):
        return call
    if isinstance(call, Mapping) and isinstance(call.get("name"), str):
        arguments = call.get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise ValueError(f"ai: message {index} has a tool call whose arguments are not a dict")
        return ToolCall(str(call.get("id") or ""), call["name"], dict(arguments))
    raise ValueError(f"ai: message {index} has a tool call without a name")


class AI(Service):
    """The interface every ai adapter implements.

    Adapters implement :meth:`_chat`, :meth:`_stream_events` and (where the provider has
    one) :meth:`_embed`, raising :class:`AIProviderError` for the provider's failures;
    this class checks arguments and runs every call under the retry policy.
    """

    service_name: ClassVar[str] = "ai"
    #: The model used when neither the ``model`` option nor the call names one.
    default_model: ClassVar[str] = ""
    #: The embedding model used when the ``embed`` call names none.
    default_embedding_model: ClassVar[str] = ""

    def __init__(
        self,
        *,
        model: str,
        timeout: float,
        instance: str = "default",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        from toolkit_batteries.core.groups import ResilienceRetryPolicy

        self.instance = instance
        self.model = model or self.default_model
        self.timeout = timeout
        self._sleep = sleep
        self._retry = ResilienceRetryPolicy()
        self._policy = self._build_policy()

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} ai.{self.instance} {self.adapter_name} model={self.model!r}>"
        )

    # ------------------------------------------------------------------ configuration

    def configure(self, *, retry: Any = None, sleep: Callable[[float], None] | None = None) -> None:
        """Change the retry policy (a ``ResilienceRetryPolicy``) or the sleep, from code."""
        if retry is not None:
            self._retry = retry
        if sleep is not None:
            self._sleep = sleep
        self._policy = self._build_policy()

    def _build_policy(self) -> Any:
        from toolkit_batteries.resilience.base import Policy, PolicySettings

        settings = PolicySettings(
            name=f"ai.{self.instance}",
            timeout=-1.0,  # each attempt is bounded by the request timeout; run inline
            retry=self._retry,
            breaker=None,
            max_concurrent=1 << 30,
            max_queue=0,
            max_wait=0.0,
        )
        policy = Policy(settings, None, instance=self.instance, sleep=self._sleep)
        return policy.derive(
            retry_if=lambda exc: isinstance(exc, AIProviderError) and exc.retryable
        )

    # ------------------------------------------------------------------ operations

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        model: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatResult:
        """Answer one prompt (a chat of one user message, with an optional system text)."""
        if not isinstance(prompt, str) or not prompt:
            raise ValueError("ai: the prompt must be a non-empty string")
        messages = [{"role": "user", "content": prompt}]
        if system:
            messages.insert(0, {"role": "system", "content": system})
        return self.chat(messages, model=model, max_tokens=max_tokens, temperature=temperature)

    def chat(
        self,
        messages: Iterable[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        model: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatResult:
        """Send a conversation; return the text, any tool calls and the token usage."""
        request = self._request(messages, tools, model, max_tokens, temperature)
        return self._policy.call(self._chat, request)

    def stream(
        self,
        messages: Iterable[Mapping[str, Any]],
        *,
        model: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatStream:
        """Send a conversation; return a :class:`ChatStream` of text deltas.

        The request is sent (and retried) before this returns; the deltas are read as
        the caller iterates. A stream carries text only: it declares no tools (so no tool
        call can be silently dropped); use :meth:`chat` for tools.
        """
        request = self._request(messages, None, model, max_tokens, temperature)
        events, close = self._policy.call(self._open_stream, request)
        return ChatStream(events, close)

    def embed(self, texts: Sequence[str], *, model: str | None = None) -> Embeddings:
        """Return one embedding vector per text, in order."""
        if isinstance(texts, str) or not texts:
            raise ValueError("ai: embed takes a non-empty list of strings")
        items = list(texts)
        if not all(isinstance(text, str) for text in items):
            raise ValueError("ai: embed takes a non-empty list of strings")
        if type(self)._embed is AI._embed:
            raise AIUnsupportedError(self.instance, self.adapter_name, "embeddings")
        chosen = model or self.default_embedding_model
        if not chosen:
            raise InvalidOptionsError(
                "ai", "model", "must be given to embed() for this adapter", instance=self.instance
            )
        return self._policy.call(self._embed, items, chosen)

    # ------------------------------------------------------------------ adapters

    def _request(
        self,
        messages: Iterable[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None,
        model: str | None,
        max_tokens: int | None,
        temperature: float | None,
    ) -> dict[str, Any]:
        chosen = model or self.model
        if not chosen:
            raise InvalidOptionsError(
                "ai", "model", "is required by this adapter", instance=self.instance
            )
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
            raise ValueError("ai: max_tokens must be a positive integer")
        return {
            "messages": normalize_messages(messages),
            "tools": normalize_tools(tools),
            "model": chosen,
            "max_tokens": max_tokens or DEFAULT_MAX_TOKENS,
            "temperature": temperature,
        }

    def _chat(self, request: dict[str, Any]) -> ChatResult:
        raise NotImplementedError

    def _open_stream(
        self, request: dict[str, Any]
    ) -> tuple[Iterator[tuple[str, Any]], Callable[[], None]]:
        """Send the request; return ``(events, close)``.

        Events are ``("text", str)``, ``("usage", Usage)``, ``("stop", str)``,
        ``("model", str)``; the first one must have arrived (so a failed request is
        retried) before this returns.
        """
        raise NotImplementedError

    def _embed(self, texts: list[str], model: str) -> Embeddings:
        raise AIUnsupportedError(self.instance, self.adapter_name, "embeddings")


def seconds(value: timedelta | None) -> float:
    """Return the request timeout in seconds (the default for 0)."""
    total = value.total_seconds() if value else 0.0
    return total if total > 0 else DEFAULT_TIMEOUT
