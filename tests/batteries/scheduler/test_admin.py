"""The slot claims admin page: a read-only list of the sqlserver scheduler's claims."""

from __future__ import annotations

from datetime import UTC, datetime

from django.test import RequestFactory

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.queue.jobs import JobRegistry, job
from toolkit_batteries.scheduler import Schedule
from toolkit_batteries.scheduler.models import SchedulerClaim


def test_the_admin_lists_claims_and_changes_nothing(sqlite_dsn):
    from django.contrib.admin import AdminSite

    from toolkit_batteries.scheduler.admin import SchedulerClaimAdmin

    @job(name="admin.ping", registry=JobRegistry())
    def ping() -> None:
        """Do nothing; only dispatched."""

    env = {"SCHEDULER__DEFAULT__ADAPTER": "sqlserver", "SCHEDULER__DEFAULT__DSN": sqlite_dsn}
    with Container(Config.load({}, env)) as container:
        scheduler = container.scheduler()
        scheduler.add(Schedule("digest", "* * * * *", ping))
        (fired,) = scheduler.run_pending(datetime(2025, 1, 6, 8, 0, 30, tzinfo=UTC))
        assert fired.ok
        page = SchedulerClaimAdmin(SchedulerClaim, AdminSite())
        request = RequestFactory().get("/admin/")
        (row,) = page.get_queryset(request).using(scheduler.database.alias)
        assert (row.name, row.slot) == ("default:digest", "2025-01-06T08:00Z")
        assert page.claimed(row).tzinfo is UTC
        assert not page.has_add_permission(request)
        assert not page.has_change_permission(request, row)
        assert not page.has_delete_permission(request, row)
