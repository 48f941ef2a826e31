"""The ``scheduler`` battery's Django app (label ``toolkit_scheduler``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class SchedulerConfig(BatteryConfig):
    """The scheduler battery: its ``schedule_run`` command and the adapter check."""

    name = "toolkit_batteries.scheduler"
