"""Options of the ``ai`` service (completions, chat, embeddings)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import OutboundSwitches
from toolkit_batteries.core.option_kinds import required, secret_set, url, warn_when_set
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["AIOptions"]


@options_class
class AIOptions(OutboundSwitches):
    """Options of ``ai``; adapters ``llm_a`` (default), ``llm_b``, ``llm_c``, ``llm_d``.

    Every backend needs a key: there is no zero-infrastructure adapter.
    """

    __checks__ = (
        secret_set(
            "toolkit_ai.W002",
            "is not set; opening ai fails until the {adapter} adapter has one",
            warning=True,
            hint="set AI__{INSTANCE}__API_KEY (from a secret store, never in code)",
        ).on("api_key"),
        url(
            "toolkit_ai.E003",
            always=("llm_d",),
            hint="base_url is an https:// URL without credentials or query (required by llm_d); "
            "allow_insecure permits http, allow_private private and loopback addresses",
        ).on("base_url"),
        required(
            "toolkit_ai.E004",
            adapters=("llm_d",),
            hint="name the model the compatible endpoint serves",
        ).on("model"),
        warn_when_set(
            "toolkit_ai.W001",
            "is on: TLS certificates are not verified",
            hint="turn it off outside a test bench",
        ).on("insecure_skip_verify"),
    )

    api_key: str = option("", secret=True, doc="provider key")
    model: str = option("", doc="model identifier")
    base_url: str = option("", doc="provider base URL; must be https unless allow_insecure")
    insecure_skip_verify: bool = option(
        False, doc="disable TLS certificate verification (logged as a warning at startup)"
    )
    timeout: Duration = option(timedelta(0), doc="request timeout; 0 = the adapter's default")
