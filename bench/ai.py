"""AI benchmarks: each adapter's ``complete`` against a raw SDK call to the same server.

For every adapter, ``ai.complete("Say hello")`` (argument checks, message translation,
the resilience retry layer, the span hook, the guarded transport that checks every
resolved address when a connection opens, the bridge from the SDK's ``httpx2`` client
to it (all four adapters), the result mapping) is timed against the provider's official
SDK making the same request on its own default client (``max_retries=0``), both on the
test suite's wire-format server for that provider (``tests.batteries.ai.server``) on
127.0.0.1. Target: at least 0.9x the raw rate.

Runs of the two sides alternate and the best of several repeats is kept
(``bench/_measure.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench._measure import best_interleaved
from bench.foundation import Result

PROMPT = "Say hello"
MODELS = {
    "llm_a": "claude-test-1",
    "llm_b": "gpt-test-1",
    "llm_c": "gemini-test-1",
    "llm_d": "compatible/test-1",
}
KEY = "bench-key-not-secret"


def _raw_call(adapter: str, url: str) -> Callable[[], Any]:
    """Return a zero-argument raw SDK call equivalent to ``complete(PROMPT)``."""
    model = MODELS[adapter]
    messages = [{"role": "user", "content": PROMPT}]
    if adapter == "llm_a":
        import anthropic

        client: Any = anthropic.Anthropic(api_key=KEY, base_url=url, max_retries=0)
        return lambda: client.messages.create(model=model, max_tokens=1024, messages=messages)
    if adapter in ("llm_b", "llm_d"):
        import openai

        client = openai.OpenAI(api_key=KEY, base_url=url, max_retries=0)
        bound = "max_completion_tokens" if adapter == "llm_b" else "max_tokens"
        return lambda: client.chat.completions.create(
            model=model, messages=messages, **{bound: 1024}
        )
    from google import genai

    client = genai.Client(
        api_key=KEY, http_options={"base_url": url + "/", "api_version": "v1beta"}
    )
    contents = [{"role": "user", "parts": [{"text": PROMPT}]}]
    return lambda: client.models.generate_content(
        model=model, contents=contents, config={"max_output_tokens": 1024}
    )


def _bench(adapter: str) -> Result:
    from tests.batteries.ai.server import FAKES, TEXT
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    server = FAKES[adapter](KEY).start()
    try:
        options = {
            "api_key": KEY,
            "base_url": server.url,
            "model": MODELS[adapter],
            "allow_insecure": True,
            "allow_private": True,
            "timeout": "10s",
        }
        container = Container(Config.load({"ai": {"adapter": adapter, "options": options}}, {}))
        ai = container.ai()
        raw = _raw_call(adapter, server.url)
        assert ai.complete(PROMPT).text == TEXT
        raw()

        def ours(calls: int) -> None:
            complete = ai.complete
            for _ in range(calls):
                complete(PROMPT)

        def base(calls: int) -> None:
            for _ in range(calls):
                raw()

        ours(20), base(20)  # warm both connections
        mine, theirs = best_interleaved(ours, base, 200, repeats=9)
        container.close()
    finally:
        server.stop()
    return Result(
        f"{adapter} complete vs raw SDK call",
        mine,
        theirs,
        "calls/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
        number=",.0f",
    )


def bench_llm_a() -> Result:
    """Time llm_a's complete against the Messages SDK call."""
    return _bench("llm_a")


def bench_llm_b() -> Result:
    """Time llm_b's complete against the Chat Completions SDK call."""
    return _bench("llm_b")


def bench_llm_c() -> Result:
    """Time llm_c's complete against the generate_content SDK call."""
    return _bench("llm_c")


def bench_llm_d() -> Result:
    """Time llm_d's complete against the Chat Completions SDK call on a compatible server."""
    return _bench("llm_d")


BENCHMARKS = (bench_llm_a, bench_llm_b, bench_llm_c, bench_llm_d)
