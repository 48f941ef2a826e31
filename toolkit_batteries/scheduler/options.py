"""Options of the ``scheduler`` service (cron-style jobs)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["SchedulerOptions"]


@options_class
class SchedulerOptions:
    """Options of ``scheduler``; adapters ``embedded`` (default) and ``sqlserver``.

    The job dispatcher is injected from code, never configured: set these keys through the
    environment rather than an ``options`` block.
    """

    close_timeout: Duration = option(
        timedelta(seconds=5), doc="bound on stop's wait for running ticks"
    )
    dsn: str = option("", doc="SQL connection string or file path (sqlserver)")
    dedicated_pool: bool = option(False, doc="open a private pool instead of sharing by DSN")
