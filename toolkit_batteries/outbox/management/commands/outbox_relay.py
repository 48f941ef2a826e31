"""``manage.py outbox_relay``: run the outbox relay, or inspect and repair the outbox.

::

    python manage.py outbox_relay                       # relay until SIGTERM / Ctrl-C
    python manage.py outbox_relay --stop-when-empty     # drain, then exit
    python manage.py outbox_relay status                # pending / processed / failed
    python manage.py outbox_relay dlq list --limit 20
    python manage.py outbox_relay dlq requeue --id 42   # or --all
    python manage.py outbox_relay dlq purge --id 42
    python manage.py outbox_relay purge --before 168h   # trim sent history

SIGTERM or SIGINT lets the batch in flight finish (published and marked), then exits 0;
a second signal exits at once (its rows are published again after ``lock_seconds``).
``toolkit outbox:relay`` maps onto this command. Exit codes follow the CLI contract:
0 done, 2 bad flags, 3 invalid configuration, 5 the database is unreachable.
"""

from __future__ import annotations

import json
import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from toolkit_batteries.core.commands import in_process_only, service_errors
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.outbox.relay_args import (
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    add_arguments,
    open_outbox,
    run_operation,
)


class Command(BaseCommand):
    """Run the outbox relay, or one of its operator subcommands."""

    help = (
        "Relay committed outbox messages to the publisher until stopped (SIGTERM finishes "
        "the batch in flight); or status, dlq list|requeue|purge, purge."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        """Add the relay's flags and subcommands."""
        add_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        """Run the subcommand, or the relay when none is given."""
        outbox = open_outbox(options["instance"])
        if options.get("action"):
            try:
                data, lines = run_operation(outbox, options)
            except (ValueError, TypeError) as exc:
                raise CommandError(str(exc), returncode=EXIT_USAGE) from None
            except ServiceUnavailableError as exc:
                raise CommandError(str(exc), returncode=EXIT_UNREACHABLE) from None
            if options.get("as_json"):
                self.stdout.write(json.dumps(data, separators=(",", ":")))
            else:
                for line in lines:
                    self.stdout.write(line)
            return
        self._relay(outbox, options)

    def _relay(self, outbox: Any, options: dict[str, Any]) -> None:
        publish = None
        if options["publish"]:
            from django.utils.module_loading import import_string

            try:
                publish = import_string(options["publish"])
            except ImportError:
                raise CommandError(
                    "--publish: cannot import that function", returncode=EXIT_USAGE
                ) from None
        with service_errors():
            relay = outbox.relay(publish, batch_size=options["batch_size"])
        if outbox.adapter_name == "memory":
            published = "messages published"
            self.stderr.write(in_process_only("outbox_relay", "outbox", published, "use db or cdc"))
        self.stdout.write(
            f"outbox_relay: {outbox.adapter_name} outbox.{outbox.instance}, batch "
            f"{relay.batch_size}, lease {relay.lease:g}s (pid {os.getpid()})"
        )
        self.stdout.flush()
        with service_errors():
            stats = relay.run(
                once=options["once"],
                stop_when_empty=options["stop_when_empty"],
                max_batches=options["max_batches"],
                install_signal_handlers=True,
            )
        self.stdout.write(
            f"outbox_relay: stopped after {stats.batches} batch(es): {stats.sent} sent, "
            f"{stats.retried} retried, {stats.dead} dead"
        )
