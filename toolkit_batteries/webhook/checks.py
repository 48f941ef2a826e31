"""System checks of the ``webhook`` battery (``manage.py check``).

Shape rules are declared on the options and reported by the core check
(:mod:`toolkit_batteries.core.option_kinds`) after ``E001`` (the adapter resolves):

* ``toolkit_webhook.E002``: ``timeout``, ``replay_tolerance`` or ``max_retries`` is
  negative.
* ``toolkit_webhook.E003``: ``queue`` adapter whose ``queue_adapter`` names no queue
  adapter.
* ``toolkit_webhook.W001``: ``allow_private_targets`` is on: deliveries may reach
  loopback, private and link-local addresses, and plain http.
* ``toolkit_webhook.W002``: ``queue_adapter``, ``queue_opts`` or ``dead_letter_topic`` set
  on the ``http`` adapter, which ignores them.

Messages name instances and fields, never values. Nothing connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import ConfigurationError

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``webhook`` instance's durations, queue wiring and target rules."""
    from toolkit_batteries.core.loading import resolve_adapter

    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "webhook"):
        where, options = f"webhook.{cfg.instance}", cfg.options
        name = str(options.queue_adapter or "").strip()
        if adapter == "queue" and name:
            try:
                resolve_adapter("queue", name)
            except ConfigurationError:
                found.append(
                    checks.Error(
                        f'{where}: option "queue_adapter" names no queue adapter',
                        hint="use memory, kvserver or db (or leave it empty for the queue service)",
                        obj=_OBJ,
                        id="toolkit_webhook.E003",
                    )
                )
        if adapter == "http" and (
            name or options.queue_opts is not None or options.dead_letter_topic
        ):
            found.append(
                checks.Warning(
                    f"{where}: queue options are set on the http adapter, which ignores them",
                    hint='set adapter "queue", or remove queue_adapter, queue_opts and '
                    "dead_letter_topic",
                    obj=_OBJ,
                    id="toolkit_webhook.W002",
                )
            )
    return found
