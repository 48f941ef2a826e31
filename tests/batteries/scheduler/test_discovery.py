"""Finding schedules (installed apps' ``schedules.py``, ``TOOLKIT_SCHEDULES``) and jobs."""

from __future__ import annotations

import sys

import pytest
from django.conf import settings
from django.test import override_settings

from toolkit_batteries.queue.jobs import UnknownJobError, registry
from toolkit_batteries.scheduler import InvalidScheduleError, discover_schedules, resolve_job
from toolkit_batteries.scheduler.discovery import schedule_modules

HERE = "tests.batteries.scheduler"


def test_no_schedules_anywhere_is_an_empty_list() -> None:
    assert discover_schedules() == []


def test_the_setting_lists_extra_modules() -> None:
    with override_settings(TOOLKIT_SCHEDULES=[f"{HERE}.schedules_fixture"]):
        found = discover_schedules()
    assert [(s.name, s.cron) for s in found] == [
        ("fixture-hourly", "0 * * * *"),
        ("fixture-daily", "@daily"),
    ]


def test_installed_apps_schedules_modules_are_discovered_first() -> None:
    apps = [*settings.INSTALLED_APPS, f"{HERE}.schedapp"]
    extra = [f"{HERE}.schedules_fixture", f"{HERE}.schedapp.schedules"]  # listed twice: once
    with override_settings(INSTALLED_APPS=apps, TOOLKIT_SCHEDULES=extra):
        assert schedule_modules() == [f"{HERE}.schedapp.schedules", f"{HERE}.schedules_fixture"]
        names = [s.name for s in discover_schedules()]
    assert names == ["app-weekly", "fixture-hourly", "fixture-daily"]


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("tests.batteries.scheduler.schedules_fixture", "must be a list"),
        ([f"{HERE}.no_such_module"], "no module named"),
        ([f"{HERE}.schedules_fixture", f"{HERE}.duplicate_fixture"], "defined twice"),
        ([f"{HERE}.not_a_list_fixture"], "define SCHEDULES"),
        ([f"{HERE}.jobs_fixture"], "define SCHEDULES"),
    ],
)
def test_bad_schedule_modules_are_refused(setting: object, message: str) -> None:
    with (
        override_settings(TOOLKIT_SCHEDULES=setting),
        pytest.raises(InvalidScheduleError, match=message),
    ):
        discover_schedules()


def test_resolve_job_imports_the_module_of_a_dotted_name() -> None:
    name = f"{HERE}.jobs_fixture.ping"
    registry.unregister(name)
    sys.modules.pop(f"{HERE}.jobs_fixture", None)
    found = resolve_job(name)
    assert found.name == name and found() == "pong"
    assert resolve_job(found) is found
    with pytest.raises(UnknownJobError, match=r"nowhere\.at\.all"):
        resolve_job("nowhere.at.all")
    with pytest.raises(UnknownJobError, match="plain"):
        resolve_job("plain")
    with pytest.raises(UnknownJobError):
        resolve_job(f"{HERE}.jobs_fixture.not_a_job")
