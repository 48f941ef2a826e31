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

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Fired InvalidScheduleError Schedule Scheduler",
    discovery="discover_schedules resolve_job",
)
