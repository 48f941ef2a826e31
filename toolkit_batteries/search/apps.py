"""The ``search`` battery's Django app (label ``toolkit_search``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class SearchConfig(BatteryConfig):
    """The search battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.search"
