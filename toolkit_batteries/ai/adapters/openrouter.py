"""OpenRouter or any OpenAI-compatible endpoint (adapter ``openrouter``, canonical ``llm_d``).

The same wire format as :mod:`.openai` (``POST {base_url}/chat/completions``,
``/embeddings``, ``Authorization: Bearer <key>``, server-sent ``data:`` chunks ending in
``data: [DONE]``) on a ``base_url`` that must be given (a gateway, a self-hosted
inference server, another vendor's compatible API), with ``max_tokens`` as the output
bound, the key every compatible server reads. ``model`` is required: there is no
default model, nor a default embedding model (pass ``embed(texts, model=...)``).
Its remote methods are traced by the class it extends.
"""

from __future__ import annotations

from typing import ClassVar

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError

from ._common import settings_of
from .openai import OpenAIAI

__all__ = ["OpenRouterAI"]


class OpenRouterAI(OpenAIAI):
    """The Chat Completions wire format against a configured ``base_url``."""

    adapter_name = "llm_d"
    default_model = ""
    default_embedding_model = ""
    max_tokens_key: ClassVar[str] = "max_tokens"
    default_base_url: ClassVar[str] = ""

    @classmethod
    def open(cls, ctx: OpenContext) -> OpenRouterAI:
        settings = settings_of(ctx, default_base_url="")
        if not settings.model:
            raise InvalidOptionsError(
                "ai", "model", "is required by the llm_d adapter", instance=ctx.instance
            )
        return cls(settings, instance=ctx.instance)
