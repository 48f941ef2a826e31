"""The ``billing`` battery's Django app (label ``toolkit_billing``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class BillingConfig(BatteryConfig):
    """The billing battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.billing"
