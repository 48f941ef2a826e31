"""The webhook adapters, by canonical name (default first, as in the catalog)."""

from __future__ import annotations

__all__ = ["ADAPTERS"]

ADAPTERS: dict[str, str] = {
    "http": "toolkit_batteries.webhook.adapters.http.HTTPWebhook",
    "queue": "toolkit_batteries.webhook.adapters.queue.QueueWebhook",
}
