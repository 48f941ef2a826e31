"""The ``media`` battery's Django app (label ``toolkit_media``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class MediaConfig(BatteryConfig):
    """The media battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.media"
