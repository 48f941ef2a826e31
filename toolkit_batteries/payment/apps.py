"""The ``payment`` battery's Django app (label ``toolkit_payment``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class PaymentConfig(BatteryConfig):
    """The payment battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.payment"
