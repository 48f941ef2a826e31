"""``manage.py schedule_run``: run the cron schedules (``toolkit schedule:run`` is the same).

::

    python manage.py schedule_run             # the loop; SIGTERM or Ctrl-C stops it (exit 0)
    python manage.py schedule_run --list      # every schedule and its next run
    python manage.py schedule_run --once      # fire what is due this minute, then exit
    python manage.py schedule_run --tick 5    # look at the clock at least every 5 s

Schedules come from ``<app>/schedules.py`` (``SCHEDULES``) of every installed app and
the ``TOOLKIT_SCHEDULES`` setting; due ones are dispatched as queue jobs, which
``queue_work`` runs. Exit codes follow the CLI contract: 0 done, 1 a dispatch failed
(``--once``), 2 bad flags, 3 invalid configuration or schedule, 5 queue unreachable.
"""

from __future__ import annotations

from typing import Any

from toolkit_batteries.core.commands import RunnerCommand, exit_codes
from toolkit_batteries.scheduler.run_args import add_flags


class Command(RunnerCommand):
    """Run the scheduler."""

    help = "Dispatch the project's cron schedules as queue jobs (--list, --once, or a loop)."
    flags = add_flags  # --once, --list and --tick

    def handle(self, *args: Any, **options: Any) -> None:
        """Run the shared runner, mapping its failures to the CLI's exit codes."""
        from toolkit_batteries.scheduler.runner import RunError, execute

        with exit_codes(RunError):
            execute(self.say, list_only=options["list"], once=options["once"], tick=options["tick"])
