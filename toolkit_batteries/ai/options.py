"""Options of the ``ai`` service (completions, chat, embeddings)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["AIOptions"]


@options_class
class AIOptions:
    """Options of ``ai``; adapters ``llm_a`` (default), ``llm_b``, ``llm_c``, ``llm_d``.

    Every backend needs a key: there is no zero-infrastructure adapter.
    """

    api_key: str = option("", secret=True, doc="provider key")
    model: str = option("", doc="model identifier")
    base_url: str = option("", doc="provider base URL; must be https unless allow_insecure")
    allow_insecure: bool = option(False, doc="permit an http base URL")
    allow_private: bool = option(
        False, doc="permit dialing private, loopback and link-local addresses (logged at startup)"
    )
    insecure_skip_verify: bool = option(
        False, doc="disable TLS certificate verification (logged as a warning at startup)"
    )
    timeout: Duration = option(timedelta(0), doc="request timeout; 0 = the adapter's default")
