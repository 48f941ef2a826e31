"""``toolkit queue:work``: run queued jobs until stopped (``manage.py queue_work``).

The flags are the management command's own (its ``add_arguments`` builds them here), so
the two can never drift apart; the command runs in this process and needs no
``toolkit_batteries.queue`` entry in ``INSTALLED_APPS``.
"""

from __future__ import annotations

from argparse import Namespace

from toolkit_batteries.cli.output import Output, Result
from toolkit_batteries.cli.parser import CommandParser
from toolkit_batteries.cli.project import call_management, require_project, setup_django

DESCRIPTION = """\
Run queued jobs (the queue battery's worker) until SIGTERM or Ctrl-C, which finish the
jobs in progress first (exit 0). Jobs come from every installed app's jobs.py and
TOOLKIT_JOBS["imports"]; the queue is the TOOLKIT["queue"] instance named by
TOOLKIT_JOBS (the memory adapter only sees jobs of its own process: use kvserver or db).
With TOOLKIT_JOBS["dispatcher"] = "celery" it starts Celery's worker instead.
Also: python manage.py queue_work."""

EPILOG = """\
examples:
  toolkit queue:work --queue emails,default --concurrency 4
  toolkit queue:work --stop-when-empty"""

BREADCRUMBS = ["toolkit schedule:run"]

_OPTIONS = ("queues", "concurrency", "pool", "once", "max_jobs", "stop_when_empty", "instance")


def _command() -> object:
    from django.core.management import load_command_class

    return load_command_class("toolkit_batteries.queue", "queue_work")


def configure(parser: CommandParser) -> None:
    """Add the ``queue_work`` management command's flags."""
    from toolkit_batteries.queue.management.commands.queue_work import Command

    Command().add_arguments(parser)


def run(args: Namespace, out: Output) -> Result:
    """Set Django up and run the worker in this process."""
    setup_django(require_project("queue:work"))
    options = {name: getattr(args, name) for name in _OPTIONS}
    printed = call_management(_command(), out=out, **options)  # type: ignore[arg-type]
    if not out.json_mode:
        return Result()
    return Result(data={"output": printed.splitlines()})
