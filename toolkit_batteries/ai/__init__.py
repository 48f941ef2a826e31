"""The ``ai`` battery: completions, chat with tools, embeddings and streaming.

Get the configured service from the registry (``services.ai()``) or a container; pick
``llm_a`` (the default: a Messages API), ``llm_b`` (Chat Completions and Embeddings),
``llm_c`` (a generative-language API) or ``llm_d`` (any OpenAI-compatible endpoint).
Every adapter needs ``api_key``; calls go out through the toolkit's outbound guard and
are retried by the resilience battery's policy. See ``docs/batteries/ai.md``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        AI,
        AIError,
        AIProviderError,
        AIUnsupportedError,
        ChatResult,
        ChatStream,
        Embeddings,
        ToolCall,
        Usage,
    )

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
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "AI": "base",
    "AIError": "base",
    "AIProviderError": "base",
    "AIUnsupportedError": "base",
    "ChatResult": "base",
    "ChatStream": "base",
    "Embeddings": "base",
    "ToolCall": "base",
    "Usage": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
