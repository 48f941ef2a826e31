"""A schedule module reusing a name from ``schedules_fixture`` (discovery must refuse it)."""

from __future__ import annotations

from toolkit_batteries.scheduler import Schedule

SCHEDULES = [
    Schedule("fixture-hourly", "30 * * * *", "tests.batteries.scheduler.jobs_fixture.ping")
]
