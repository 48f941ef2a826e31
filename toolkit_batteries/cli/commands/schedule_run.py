"""``toolkit schedule:run``: the cron scheduler (``manage.py schedule_run``).

Both run :func:`toolkit_batteries.scheduler.runner.execute`: the schedules of every
installed app's ``schedules.py`` (and ``TOOLKIT_SCHEDULES``) on the ``scheduler``
service, dispatching due jobs to the queue. Neither needs ``toolkit_batteries.scheduler``
in ``INSTALLED_APPS`` to run (``manage.py schedule_run`` does, to be found).
"""

from __future__ import annotations

from argparse import Namespace

from toolkit_batteries.cli.output import CliError, Output, Result
from toolkit_batteries.cli.parser import CommandParser
from toolkit_batteries.cli.project import require_project, setup_django

DESCRIPTION = """\
Run the project's cron schedules: Schedule(...) entries from every installed app's
schedules.py (SCHEDULES) and the TOOLKIT_SCHEDULES setting. At each minute boundary
every due schedule's job is dispatched to the job queue (run it with `toolkit
queue:work`), each schedule at most once per slot; after a pause only the latest missed
slot fires. Cron is read in settings.TIME_ZONE. SIGTERM or Ctrl-C stops the loop (exit
0). --list prints every schedule and its next run; --once fires what is due this minute
and exits (to run from system cron). Also: python manage.py schedule_run."""

EPILOG = """\
examples:
  toolkit schedule:run --list
  toolkit schedule:run --once
  toolkit schedule:run"""

BREADCRUMBS = ["toolkit queue:work"]


def configure(parser: CommandParser) -> None:
    """Add ``--once``, ``--list`` and ``--tick`` (shared with ``manage.py schedule_run``)."""
    from toolkit_batteries.scheduler.run_args import add_flags

    add_flags(parser)


def run(args: Namespace, out: Output) -> Result:
    """List, fire once, or loop until a signal."""
    setup_django(require_project("schedule:run"))
    from toolkit_batteries.scheduler.runner import RunError, execute

    try:
        data = execute(out.line, list_only=args.list, once=args.once, tick=args.tick)
    except RunError as exc:
        raise CliError(str(exc), exit_code=exc.exit_code, data=exc.data) from None
    return Result(data=data)
