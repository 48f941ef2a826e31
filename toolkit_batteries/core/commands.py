"""The base of the toolkit's management commands that run a runner shared with the CLI.

``serve``, ``dev``, ``doctor``, ``config_show``, ``db_seed``, ``queue_work`` and
``schedule_run`` are each a thin Django face on code that ``toolkit <command>`` runs too:
the flags come from one function both parsers call, the runner decides about system
checks itself, its lines must reach a pipe at once (a long-running command's output must
not wait in a buffer), and its failures carry the CLI contract's exit code. This class
holds that wiring once, so a command declares only its help, its flags and its call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from django.core.management.base import BaseCommand, CommandError, CommandParser

__all__ = [
    "EXIT_INVALID",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "RunnerCommand",
    "exit_codes",
    "in_process_only",
    "service_errors",
]

#: The CLI contract's exit codes a command's own failures map to.
EXIT_USAGE = 2
EXIT_INVALID = 3
EXIT_UNREACHABLE = 5


class RunnerCommand(BaseCommand):
    """A management command whose flags and behaviour live in a runner shared with the CLI."""

    #: The runner runs the checks it needs (``serve`` its preflight); Django runs none.
    requires_system_checks: list[str] = []
    #: Adds the command's flags; the same function builds ``toolkit <command>``'s parser.
    flags: ClassVar[Callable[[CommandParser], None] | None] = None

    def add_arguments(self, parser: CommandParser) -> None:
        """Add the flags shared with the ``toolkit`` program."""
        add = type(self).flags
        if add is not None:
            add(parser)

    def say(self, line: str) -> None:
        """Write ``line`` to stdout and flush it."""
        self.stdout.write(line)
        self.stdout.flush()

    def warn(self, line: str) -> None:
        """Write ``line`` to stderr, styled as Django styles errors, and flush it."""
        self.stderr.write(line)
        self.stderr.flush()

    def note(self, line: str) -> None:
        """Write ``line`` to stderr as it is (a log line, not an error) and flush it."""
        self.stderr.write(line, style_func=None)
        self.stderr.flush()


@contextmanager
def exit_codes(*errors: type[Exception]) -> Iterator[None]:
    """Turn ``errors`` (which carry ``exit_code``) into ``CommandError`` with that code.

    The message is the error's own one line; the traceback is dropped (``from None``), as
    ``toolkit <command>`` drops it, so both faces fail with the same text and status.
    """
    try:
        yield
    except errors as exc:
        code: Any = getattr(exc, "exit_code", 1)
        raise CommandError(str(exc), returncode=code) from None


@contextmanager
def service_errors() -> Iterator[None]:
    """Turn a configuration error into exit 3 and an unreachable service into exit 5.

    What every command that opens a service and runs it (``queue_work``, ``outbox_relay``)
    answers the same way, with the error's own one line and no traceback.
    """
    from .errors import ConfigurationError, ServiceUnavailableError

    try:
        yield
    except ConfigurationError as exc:
        raise CommandError(str(exc), returncode=EXIT_INVALID) from None
    except ServiceUnavailableError as exc:
        raise CommandError(str(exc), returncode=EXIT_UNREACHABLE) from None


def in_process_only(command: str, service: str, items: str, use: str) -> str:
    """Return the warning a long-running command prints when it runs a ``memory`` adapter.

    Such a worker sees only what its own process put there, which is rarely what an
    operator starting it meant; ``items`` names what never arrives, ``use`` the way out.
    """
    return (
        f"{command}: warning: the memory {service} lives in this process only; {items} "
        f"by other processes never arrive ({use})"
    )
