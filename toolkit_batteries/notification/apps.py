"""The ``notification`` battery's Django app (label ``toolkit_notification``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class NotificationConfig(BatteryConfig):
    """The notification battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.notification"
