"""The ``log`` battery's Django app (label ``toolkit_log``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class LogConfig(BatteryConfig):
    """Register the log checks; ``label`` (``toolkit_log``) and ``service`` come from ``name``."""

    name = "toolkit_batteries.log"
