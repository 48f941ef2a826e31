"""The outbox relay's flags, operator subcommands and what they run, declared once.

``manage.py outbox_relay`` and ``toolkit outbox:relay`` both build their parsers with
:func:`add_arguments` and run ``status``/``dlq``/``purge`` through :func:`run_operation`,
so neither command imports the other (``tests/test_layout.py``) and they cannot drift.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from toolkit_batteries.core.argtypes import positive_int
from toolkit_batteries.core.commands import (
    EXIT_INVALID,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    service_errors,
)

__all__ = [
    "EXIT_INVALID",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "add_arguments",
    "open_outbox",
    "run_operation",
]


def add_arguments(parser: Any, *, json_flag: bool = True) -> None:
    """Add the relay's flags and its subcommands (shared with ``toolkit outbox:relay``).

    ``toolkit`` has a global ``--json`` of its own, so it builds the parser without ours.
    """
    from toolkit_batteries.outbox.operations import before_seconds

    parser.add_argument(
        "--instance", default="default", help='outbox service instance (default "default")'
    )
    parser.add_argument("--once", action="store_true", help="relay one batch, then exit")
    parser.add_argument(
        "--stop-when-empty", action="store_true", help="exit at the first empty batch"
    )
    parser.add_argument(
        "--max-batches", type=positive_int, default=None, help="exit after this many batches"
    )
    parser.add_argument(
        "--batch-size", type=positive_int, default=None, help="override the batch_size option"
    )
    parser.add_argument(
        "--publish",
        default="",
        metavar="DOTTED.PATH",
        help="a function taking a Record, instead of the publisher option",
    )
    sub = parser.add_subparsers(dest="action", metavar="<subcommand>")
    status = sub.add_parser("status", help="pending, processed and failed counts; stalled or not")
    dlq = sub.add_parser("dlq", help="the dead list: list, requeue (--id X | --all), purge --id X")
    dlq.add_argument(
        "dlq_action", nargs="?", choices=("list", "requeue", "purge"), metavar="list|requeue|purge"
    )
    dlq.add_argument("--limit", type=positive_int, default=100, help="list: at most N (1-1000)")
    dlq.add_argument("--id", type=positive_int, dest="row", help="requeue, purge: the message id")
    dlq.add_argument("--all", action="store_true", dest="everything", help="requeue: every one")
    purging = sub.add_parser("purge", help="delete sent messages older than --before")
    purging.add_argument(
        "--before",
        type=before_seconds,
        default=None,
        help="age such as 168h (default: the retention option)",
    )
    if json_flag:
        for leaf in (status, dlq, purging):
            leaf.add_argument(
                "--json", action="store_true", dest="as_json", help="print the data as JSON"
            )


def run_operation(outbox: Any, options: dict[str, Any]) -> tuple[Any, list[str]]:
    """Run the subcommand in ``options`` on ``outbox``; raise CommandError for misuse."""
    from toolkit_batteries.outbox import operations

    action = options.get("action")
    if action == "status":
        return operations.status(outbox)
    if action == "purge":
        return operations.purge(outbox, options.get("before"))
    sub = options.get("dlq_action")
    if sub == "list":
        limit = options.get("limit") or 100
        if limit > 1000:
            raise CommandError("dlq list: --limit must be at most 1000", returncode=EXIT_USAGE)
        return operations.dlq_list(outbox, limit)
    if sub == "requeue":
        row, everything = options.get("row"), bool(options.get("everything"))
        if (row is None) == (not everything):
            raise CommandError(
                "dlq requeue: give exactly one of --id or --all", returncode=EXIT_USAGE
            )
        return operations.dlq_requeue(outbox, row, everything)
    if sub == "purge":
        if options.get("row") is None or options.get("everything"):
            raise CommandError("dlq purge: --id is required", returncode=EXIT_USAGE)
        return operations.dlq_purge(outbox, options["row"])
    raise CommandError("dlq: give a subcommand: list, requeue or purge", returncode=EXIT_USAGE)


def open_outbox(instance: str) -> Any:
    """Return ``services.outbox(instance)``; configuration and reachability become exits."""
    from toolkit_batteries import services

    with service_errors():
        return services.outbox(instance)
