"""Behaviour check of ``webhook``; every ID is in docs/batteries/webhook.md, "Checks".

Shape rules are declared on the options. Here: ``E003``, the ``queue`` adapter's
``queue_adapter`` names a queue adapter that resolves. Messages name fields, never values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit_batteries.core.checks import error, resolved_instances
from toolkit_batteries.core.errors import ConfigurationError

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]


def battery_checks(config: Config) -> list[CheckMessage]:
    """Check that every ``queue`` instance's ``queue_adapter`` resolves."""
    from toolkit_batteries.core.loading import resolve_adapter

    found: list[CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "webhook"):
        name = str(cfg.options.queue_adapter or "").strip()
        if adapter != "queue" or not name:
            continue
        try:
            resolve_adapter("queue", name)
        except ConfigurationError:
            found.append(
                error(
                    "toolkit_webhook.E003",
                    f'webhook.{cfg.instance}: option "queue_adapter" names no queue adapter',
                    "use memory, kvserver or db (or leave it empty for the queue service)",
                )
            )
    return found
