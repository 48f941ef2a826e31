"""The ``scheduler`` battery: cron entries that dispatch queue jobs.

::

    # <app>/schedules.py, discovered in every installed app
    from toolkit_batteries.scheduler import Schedule

    SCHEDULES = [Schedule("nightly-report", "0 2 * * *", "reports.jobs.build_report")]

    # python manage.py schedule_run   (toolkit schedule:run; --list, --once)

``services.scheduler()`` returns the configured adapter (``embedded``: a loop in this
process); the job dispatcher is injected in code, never configured. Importing this
package imports no Django and no croniter.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Fired, InvalidScheduleError, Schedule, Scheduler
    from .discovery import discover_schedules, resolve_job

__all__ = [
    "Fired",
    "InvalidScheduleError",
    "Schedule",
    "Scheduler",
    "discover_schedules",
    "resolve_job",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Fired": "base",
    "InvalidScheduleError": "base",
    "Schedule": "base",
    "Scheduler": "base",
    "discover_schedules": "discovery",
    "resolve_job": "discovery",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
