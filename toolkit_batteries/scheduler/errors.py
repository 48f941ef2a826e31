"""The scheduler battery's error: a schedule whose name, cron expression or job is unusable.

``scheduler.base`` re-imports it, so old import paths keep working.
"""

from __future__ import annotations

from toolkit_batteries.core.errors import ToolkitError

__all__ = [
    "InvalidScheduleError",
]


class InvalidScheduleError(ToolkitError, ValueError):
    """A schedule's name, cron expression or job is not usable."""

    code = "invalid_schedule"
