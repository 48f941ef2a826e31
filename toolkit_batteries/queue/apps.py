"""The ``queue`` battery's Django app (label ``toolkit_queue``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class QueueConfig(BatteryConfig):
    """The queue battery; checks come from ``checks.battery_checks`` when present."""

    name = "toolkit_batteries.queue"
