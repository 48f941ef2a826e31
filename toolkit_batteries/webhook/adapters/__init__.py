"""The webhook adapters."""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(__name__, "http.HTTPWebhook queue.QueueWebhook")
