"""``toolkit outbox:relay``: run the outbox relay, or its operator subcommands.

The flags and subcommands are declared once (:mod:`toolkit_batteries.outbox.relay_args`,
which ``manage.py outbox_relay`` builds from too), so the two cannot drift apart. ``status``, ``dlq
list|requeue|purge`` and ``purge`` return their data in the ``--json`` envelope
(``status`` -> ``{pending, processed, failed, last_error?, stalled}``); without a
subcommand the relay runs in this process until SIGTERM or Ctrl-C.
"""

from __future__ import annotations

from argparse import Namespace

from toolkit_batteries.cli.output import CliError, Output, Result
from toolkit_batteries.cli.parser import CommandParser
from toolkit_batteries.cli.project import call_management, require_project, setup_django

DESCRIPTION = """\
Relay committed outbox messages (the outbox battery) to the eventbus or queue battery
until SIGTERM or Ctrl-C, which finish the batch in flight first (exit 0). Subcommands
inspect and repair the outbox: status, dlq list, dlq requeue (--id X | --all),
dlq purge --id X, purge --before 168h. Also: python manage.py outbox_relay."""

EPILOG = """\
examples:
  toolkit outbox:relay                         # relay until stopped
  toolkit outbox:relay --stop-when-empty       # drain, then exit
  toolkit --json outbox:relay status
  toolkit outbox:relay dlq list --limit 20
  toolkit outbox:relay dlq requeue --all
  toolkit outbox:relay purge --before 168h"""

BREADCRUMBS = ["toolkit outbox:relay status"]

_RELAY = ("instance", "once", "stop_when_empty", "max_batches", "batch_size", "publish")


def configure(parser: CommandParser) -> None:
    """Add the relay's flags and subcommands (shared with ``manage.py outbox_relay``)."""
    from toolkit_batteries.outbox.relay_args import add_arguments

    add_arguments(parser, json_flag=False)


def run(args: Namespace, out: Output) -> Result:
    """Set Django up; run a subcommand (data in the envelope) or the relay."""
    setup_django(require_project("outbox:relay"))
    from django.core.management import load_command_class
    from django.core.management.base import CommandError

    from toolkit_batteries.outbox.relay_args import (
        open_outbox,
        run_operation,
    )

    if args.action:
        options = vars(args)
        try:
            outbox = open_outbox(args.instance)
            data, lines = run_operation(outbox, options)
        except CommandError as exc:
            raise CliError(str(exc), exit_code=getattr(exc, "returncode", 1) or 1) from None
        except (ValueError, TypeError) as exc:
            raise CliError(str(exc), exit_code=2) from None
        if not out.json_mode:
            for line in lines:
                out.line(line)
        return Result(data=data)
    command = load_command_class("toolkit_batteries.outbox", "outbox_relay")
    options = {name: getattr(args, name) for name in _RELAY}
    printed = call_management(command, out=out, **options)
    if not out.json_mode:
        return Result()
    return Result(data={"output": printed.splitlines()})
