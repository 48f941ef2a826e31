"""The ``outbox`` battery's Django app (label ``toolkit_outbox``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class OutboxConfig(BatteryConfig):
    """The outbox battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.outbox"
