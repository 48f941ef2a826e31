"""The ai adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so no provider SDK is
imported by ``django.setup()``. The vendor aliases (``anthropic``, ``openai``,
``gemini``, ``openrouter``) live in the shared ``VENDOR_ALIASES`` table of
:mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "llm_a": "toolkit_batteries.ai.adapters.llm_a.AnthropicAI",
    "llm_b": "toolkit_batteries.ai.adapters.llm_b.OpenAIAI",
    "llm_c": "toolkit_batteries.ai.adapters.llm_c.GeminiAI",
    "llm_d": "toolkit_batteries.ai.adapters.llm_d.CompatibleAI",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {"claude": "llm_a", "google_genai": "llm_c", "openai_compatible": "llm_d"}
