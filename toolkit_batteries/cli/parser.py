"""argparse, made to fit the CLI contract: errors raise, help returns, nothing prompts.

Commands build their flags on a :class:`CommandParser`. A flag error raises
:class:`~toolkit_batteries.cli.output.UsageError` (exit 2, and an envelope under
``--json``) instead of argparse's own exit; ``-h`` prints the help and raises
:class:`HelpShown`, which the dispatcher turns into exit 0.
"""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from .output import UsageError

__all__ = ["CommandParser", "HelpShown", "add_dry_run"]


class HelpShown(Exception):
    """``-h`` / ``--help`` printed a command's help; the command does not run."""


class CommandParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose failures are exceptions, not ``sys.exit``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Raise a usage error naming the command: ``toolkit compile: <message>``."""
        raise UsageError(f"{self.prog}: {message}", hint=f"run `{self.prog} --help`")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        """Help and version actions end here: stop parsing without exiting the process."""
        if message:
            self._print_message(message)
        if status:
            raise UsageError(f"{self.prog}: {message or 'invalid arguments'}".strip())
        raise HelpShown


def add_dry_run(parser: argparse.ArgumentParser) -> None:
    """Add the shared ``--dry-run`` flag: validate and render, write nothing."""
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="validate and render, print what would be written, write nothing",
    )
