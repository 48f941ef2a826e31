"""The ``webhook`` battery's Django app (label ``toolkit_webhook``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class WebhookConfig(BatteryConfig):
    """The webhook battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.webhook"
