"""Discovered because ``schedapp`` is an installed app."""

from __future__ import annotations

from toolkit_batteries.scheduler import Schedule

SCHEDULES = [Schedule("app-weekly", "@weekly", "tests.batteries.scheduler.jobs_fixture.ping")]
