"""The ai adapters. Each module and class is named after the product it talks to; the
canonical names are the spec's neutral words, and the product names (``anthropic``,
``openai``, ``gemini``, ``openrouter``) come from the catalog row. No provider SDK is
imported by ``django.setup()``.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS = adapter_paths(
    __name__,
    "llm_a=anthropic.AnthropicAI llm_b=openai.OpenAIAI llm_c=gemini.GeminiAI"
    " llm_d=openrouter.OpenRouterAI",
)

#: Names of the models' families and SDKs (alias -> canonical).
ALIASES: dict[str, str] = {"claude": "llm_a", "google_genai": "llm_c", "openai_compatible": "llm_d"}
