"""System checks of the ``webhook`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_webhook.E001`` (each instance's adapter resolves):

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
        for field, value in (
            ("timeout", options.timeout.total_seconds()),
            ("replay_tolerance", options.replay_tolerance.total_seconds()),
            ("max_retries", options.max_retries),
        ):
            if value < 0:
                found.append(
                    checks.Error(
                        f'{where}: option "{field}" is negative',
                        hint="use a positive value, or leave it unset for the default",
                        obj=_OBJ,
                        id="toolkit_webhook.E002",
                    )
                )
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
        if options.allow_private_targets:
            found.append(
                checks.Warning(
                    f'{where}: option "allow_private_targets" is on',
                    hint="deliveries may reach loopback, private and link-local addresses "
                    "and plain http; keep it for development",
                    obj=_OBJ,
                    id="toolkit_webhook.W001",
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
