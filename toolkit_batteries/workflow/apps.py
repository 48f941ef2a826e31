"""The ``workflow`` battery's Django app (label ``toolkit_workflow``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class WorkflowConfig(BatteryConfig):
    """The workflow battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.workflow"
