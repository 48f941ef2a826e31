"""``toolkit queue:work``: run queued jobs until stopped (``manage.py queue_work``).

The flags are declared once (:mod:`toolkit_batteries.queue.worker_args`, which
``manage.py queue_work`` builds from too), so the two can never drift apart; the worker
runs in this process through Django's command class, loaded by name, and needs no
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


def _command() -> object:
    from django.core.management import load_command_class

    return load_command_class("toolkit_batteries.queue", "queue_work")


def configure(parser: CommandParser) -> None:
    """Add the worker's flags (shared with ``manage.py queue_work``)."""
    from toolkit_batteries.queue.worker_args import add_worker_arguments

    add_worker_arguments(parser)


def run(args: Namespace, out: Output) -> Result:
    """Set Django up and run the worker in this process."""
    setup_django(require_project("queue:work"))
    from toolkit_batteries.queue.worker_args import WORKER_OPTIONS

    options = {name: getattr(args, name) for name in WORKER_OPTIONS}
    printed = call_management(_command(), out=out, **options)  # type: ignore[arg-type]
    if not out.json_mode:
        return Result()
    return Result(data={"output": printed.splitlines()})
