"""The ``ai`` battery: completions, chat with tools, embeddings and streaming.

Get the configured service from the registry (``services.ai()``) or a container; pick
``llm_a`` (the default: a Messages API), ``llm_b`` (Chat Completions and Embeddings),
``llm_c`` (a generative-language API) or ``llm_d`` (any OpenAI-compatible endpoint).
Every adapter needs ``api_key``; calls go out through the toolkit's outbound guard and
are retried by the resilience battery's policy. See ``docs/batteries/ai.md``.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base=(
        "AI AIError AIProviderError AIUnsupportedError ChatResult ChatStream Embeddings ToolCall "
        "Usage"
    ),
)
