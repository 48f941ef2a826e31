"""The ``flag`` battery's Django app (label ``toolkit_flag``; template tags ``toolkit_flags``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class FlagConfig(BatteryConfig):
    """The flag battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.flag"
