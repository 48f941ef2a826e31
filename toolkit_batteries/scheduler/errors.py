"""The errors of the scheduler battery, in one module.

The modules that defined them before re-import them, so old import paths keep working.
"""

from __future__ import annotations

from toolkit_batteries.core.errors import ToolkitError

__all__ = [
    "InvalidScheduleError",
]


class InvalidScheduleError(ToolkitError, ValueError):
    """A schedule's name, cron expression or job is not usable."""

    code = "invalid_schedule"
