"""The ``eventbus`` battery's Django app (label ``toolkit_eventbus``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class EventBusConfig(BatteryConfig):
    """The eventbus battery; checks come from ``checks.battery_checks`` when present."""

    name = "toolkit_batteries.eventbus"
