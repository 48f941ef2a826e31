"""One contract, every adapter: completions, chat with tools, streaming, embeddings, errors.

Each adapter is opened through configuration and a Container and talks to its
provider's fake on 127.0.0.1 (:mod:`.server`), which answers in the provider's own wire
format; what differs per provider on the wire is asserted in ``test_wire.py``.
"""

from __future__ import annotations

import pytest

from toolkit_batteries.ai import (
    AI,
    AIProviderError,
    AIUnsupportedError,
    ChatResult,
    ChatStream,
    ToolCall,
    Usage,
)
from toolkit_batteries.core.errors import InvalidOptionsError

from .conftest import MODELS, Opened
from .server import INPUT_TOKENS, OUTPUT_TOKENS, TEXT, TEXT_DELTAS, TOOL_ARGS

WEATHER = {
    "name": "weather",
    "description": "current weather of a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
#: Adapters whose provider has an embeddings API.
EMBEDS = {"llm_b", "llm_c", "llm_d"}
#: The provider's own word for "the answer ended" and "the model asked for a tool".
ENDED = {"llm_a": "end_turn", "llm_b": "stop", "llm_c": "STOP", "llm_d": "stop"}
CALLED_A_TOOL = {"llm_a": "tool_use", "llm_b": "tool_calls", "llm_c": "STOP", "llm_d": "tool_calls"}


class TestAIContract:
    def test_is_the_battery_interface(self, opened: Opened) -> None:
        assert isinstance(opened.ai, AI)
        assert opened.ai.adapter_name == opened.adapter
        assert opened.ai.model == MODELS[opened.adapter]

    def test_complete_returns_text_and_usage(self, opened: Opened) -> None:
        result = opened.ai.complete("Say hello", system="Be brief.")
        assert isinstance(result, ChatResult)
        assert result.text == TEXT
        assert result.tool_calls == ()
        assert result.usage == Usage(INPUT_TOKENS, OUTPUT_TOKENS)
        assert result.usage.total_tokens == INPUT_TOKENS + OUTPUT_TOKENS
        assert result.stop_reason == ENDED[opened.adapter]
        assert len(opened.server.received) == 1

    def test_chat_with_tools_returns_the_tool_call(self, opened: Opened) -> None:
        result = opened.ai.chat([{"role": "user", "content": "Weather in Paris?"}], tools=[WEATHER])
        assert len(result.tool_calls) == 1
        call = result.tool_calls[0]
        assert (call.name, call.arguments) == ("weather", TOOL_ARGS)
        assert call.id
        assert result.usage.input_tokens == INPUT_TOKENS
        assert result.stop_reason == CALLED_A_TOOL[opened.adapter]

    def test_tool_result_round_trip(self, opened: Opened) -> None:
        first = opened.ai.chat([{"role": "user", "content": "Weather in Paris?"}], tools=[WEATHER])
        call = first.tool_calls[0]
        second = opened.ai.chat(
            [
                {"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": first.text, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call.id, "content": "sunny, 21 C"},
            ],
            tools=[WEATHER],
        )
        assert second.text == TEXT
        assert second.tool_calls == ()
        assert "sunny, 21 C" in opened.server.received[-1].raw.decode()

    def test_stream_yields_the_deltas_then_usage(self, opened: Opened) -> None:
        with opened.ai.stream([{"role": "user", "content": "Say hello"}]) as stream:
            assert isinstance(stream, ChatStream)
            deltas = list(stream)
        assert deltas == list(TEXT_DELTAS)
        assert stream.text == TEXT
        assert stream.usage == Usage(INPUT_TOKENS, OUTPUT_TOKENS)
        assert stream.done
        assert stream.stop_reason == ENDED[opened.adapter]

    def test_stream_closed_early_releases_and_the_next_call_works(self, opened: Opened) -> None:
        stream = opened.ai.stream([{"role": "user", "content": "Say hello"}])
        assert next(stream) == TEXT_DELTAS[0]
        stream.close()
        assert not stream.done
        assert opened.ai.complete("again").text == TEXT

    def test_a_stream_cut_mid_body_raises_from_the_iteration(self, opened: Opened) -> None:
        opened.server.cut_after = {"llm_a": 4, "llm_c": 1}.get(opened.adapter, 1)
        received: list[str] = []
        with (
            pytest.raises(AIProviderError) as caught,
            opened.ai.stream([{"role": "user", "content": "hi"}]) as stream,
        ):
            received.extend(stream)
        assert received == [TEXT_DELTAS[0]]
        assert caught.value.kind == "connection" and caught.value.status is None
        assert len(opened.server.received) == 1  # past the first event: not retried

    def test_embed_one_vector_per_text_in_order(self, opened: Opened) -> None:
        texts = ["ab", "cde", "f"]
        if opened.adapter not in EMBEDS:
            with pytest.raises(AIUnsupportedError, match=f"ai.default: the {opened.adapter}"):
                opened.ai.embed(texts)
            assert opened.server.received == []
            return
        model = "embed-test-1" if opened.adapter == "llm_d" else None
        result = opened.ai.embed(texts, model=model)
        assert result.vectors == [[2.0, 0.0, 0.5], [3.0, 1.0, 0.5], [1.0, 2.0, 0.5]]

    def test_model_per_call_overrides_the_option(self, opened: Opened) -> None:
        opened.ai.complete("hi", model="other-model-7")
        assert "other-model-7" in (
            opened.server.received[-1].path + opened.server.received[-1].raw.decode()
        )

    def test_retries_a_rate_limit_then_succeeds(self, opened: Opened) -> None:
        opened.server.failures.extend([(429, _error_body(opened.adapter, 429))] * 2)
        assert opened.ai.complete("hi").text == TEXT
        assert len(opened.server.received) == 3
        # The resilience default's backoff: two waits, each within its bounds.
        assert len(opened.waits) == 2 and all(0 < wait <= 10 for wait in opened.waits)

    def test_a_rate_limit_waits_at_least_what_retry_after_asks(self, opened: Opened) -> None:
        opened.server.failures.append((429, _error_body(opened.adapter, 429), {"Retry-After": "7"}))
        assert opened.ai.complete("hi").text == TEXT
        assert len(opened.server.received) == 2
        assert opened.waits == [7.0]

    def test_a_server_error_retried_until_the_attempts_run_out(self, opened: Opened) -> None:
        opened.server.failures.extend([(503, _error_body(opened.adapter, 503))] * 5)
        with pytest.raises(AIProviderError) as caught:
            opened.ai.complete("hi")
        assert caught.value.status == 503 and caught.value.retryable
        assert len(opened.server.received) == 3  # the resilience default: 3 attempts

    def test_a_bad_request_is_not_retried(self, opened: Opened) -> None:
        opened.server.failures.append((400, _error_body(opened.adapter, 400)))
        with pytest.raises(AIProviderError) as caught:
            opened.ai.complete("hi")
        error = caught.value
        assert error.status == 400 and not error.retryable
        assert str(error).startswith(f"ai.default: the {opened.adapter} provider answered HTTP 400")
        assert "hi" not in str(error).split("(")[-1]
        assert len(opened.server.received) == 1

    def test_a_stream_is_retried_before_its_first_delta(self, opened: Opened) -> None:
        opened.server.failures.append(
            (529 if opened.adapter == "llm_a" else 500, _error_body(opened.adapter, 500))
        )
        with opened.ai.stream([{"role": "user", "content": "hi"}]) as stream:
            assert "".join(stream) == TEXT
        assert len(opened.server.received) == 2

    def test_a_wrong_key_is_an_error_without_the_key(self, opened: Opened) -> None:
        opened.server.key = "another-key"
        with pytest.raises(AIProviderError) as caught:
            opened.ai.complete("hi")
        assert caught.value.status in (400, 401)
        assert opened.key not in str(caught.value) + caught.value.detail
        assert opened.key not in repr(opened.ai)

    def test_arguments_are_checked_before_anything_is_sent(self, opened: Opened) -> None:
        for bad in ([], [{"role": "wizard", "content": "x"}], [{"role": "user", "content": 3}]):
            with pytest.raises(ValueError):
                opened.ai.chat(bad)
        with pytest.raises(ValueError):
            opened.ai.complete("")
        with pytest.raises(ValueError):
            opened.ai.embed("not a list")
        with pytest.raises(ValueError):
            opened.ai.chat([{"role": "user", "content": "x"}], max_tokens=0)
        assert opened.server.received == []

    def test_tool_calls_given_as_dicts_are_accepted(self, opened: Opened) -> None:
        result = opened.ai.chat(
            [
                {"role": "user", "content": "Weather?"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": "c1", "name": "weather", "arguments": {"city": "Oslo"}}],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "rain"},
            ],
            tools=[WEATHER],
        )
        assert result.text == TEXT
        assert "Oslo" in opened.server.received[-1].raw.decode()
        assert ToolCall("c1", "weather", {"city": "Oslo"}) == ToolCall(
            "c1", "weather", {"city": "Oslo"}
        )


def _error_body(adapter: str, status: int) -> dict:
    from .server import error_a, error_b, error_c

    if adapter == "llm_a":
        kind = {429: "rate_limit_error", 400: "invalid_request_error"}.get(status, "api_error")
        return error_a(kind, "failure")
    if adapter == "llm_c":
        name = {429: "RESOURCE_EXHAUSTED", 400: "INVALID_ARGUMENT"}.get(status, "UNAVAILABLE")
        return error_c(status, "failure", name)
    kind = {429: "rate_limit_exceeded", 400: "invalid_request_error"}.get(status, "server_error")
    return error_b("failure", kind, None)


def test_every_adapter_needs_a_key() -> None:
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    for adapter in ("llm_a", "llm_b", "llm_c", "llm_d"):
        options = {"base_url": "https://llm.example.com/v1", "model": "m"}
        container = Container(Config.load({"ai": {"adapter": adapter, "options": options}}, {}))
        with pytest.raises(InvalidOptionsError, match=r'ai\.default: option "api_key" is required'):
            container.ai()
        container.close()
