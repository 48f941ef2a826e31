"""The ai adapters, by canonical name (default first, as in the catalog).

Each module and class is named after the product it talks to; the canonical names are
the spec's neutral words, and the product names (``anthropic``, ``openai``, ``gemini``,
``openrouter``) are aliases from the shared ``VENDOR_ALIASES`` table of
:mod:`toolkit_batteries.core.loading`, accepted wherever a canonical name is.
Values are dotted paths, imported only when an adapter opens, so no provider SDK is
imported by ``django.setup()``.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "llm_a": "toolkit_batteries.ai.adapters.anthropic.AnthropicAI",
    "llm_b": "toolkit_batteries.ai.adapters.openai.OpenAIAI",
    "llm_c": "toolkit_batteries.ai.adapters.gemini.GeminiAI",
    "llm_d": "toolkit_batteries.ai.adapters.openrouter.OpenRouterAI",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {"claude": "llm_a", "google_genai": "llm_c", "openai_compatible": "llm_d"}
