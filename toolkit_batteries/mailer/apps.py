"""The ``mailer`` battery's Django app (label ``toolkit_mailer``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class MailerConfig(BatteryConfig):
    """The mailer battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.mailer"
