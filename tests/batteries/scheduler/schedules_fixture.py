"""A schedule module named by ``TOOLKIT_SCHEDULES`` in the discovery tests."""

from __future__ import annotations

from toolkit_batteries.scheduler import Schedule

SCHEDULES = [
    Schedule("fixture-hourly", "0 * * * *", "tests.batteries.scheduler.jobs_fixture.ping"),
    Schedule("fixture-daily", "@daily", "tests.batteries.scheduler.jobs_fixture.ping", args=(1,)),
]
