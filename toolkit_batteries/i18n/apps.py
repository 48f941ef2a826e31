"""The ``i18n`` battery's Django app (label ``toolkit_i18n``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class I18nConfig(BatteryConfig):
    """The i18n battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.i18n"
