"""The ``toolkit`` command-line program.

This release knows only ``--version`` and ``--help``; the commands of the CLI contract
(``new``, ``compile``, ``serve``, ``db``, ``doctor``, ...) arrive in later releases. The module
imports nothing beyond the standard library's ``sys`` so that ``toolkit --help`` starts fast
and never loads Django; a command that needs Django will import it inside its own handler.

Exit codes follow the CLI contract: 0 success, 1 runtime error (including a bare
``toolkit``), 2 usage error (an unknown command or flag).
"""

from __future__ import annotations

import sys

from toolkit_batteries import __version__

# `typing` alone costs more than the rest of start-up; type checkers treat a module-level
# TYPE_CHECKING constant like typing.TYPE_CHECKING.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TextIO

__all__ = ["EXIT_OK", "EXIT_RUNTIME", "EXIT_USAGE", "main", "usage"]

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2

PROG = "toolkit"

_USAGE = f"""\
usage: {PROG} [--help] [--version] <command> [<args>]

toolkit {__version__}: schema-driven backend toolkit for Django.

options:
  -h, --help     show this help and exit
  -V, --version  print the version and exit

commands:
  (none yet)     more commands arrive in later releases: new, compile, serve, db,
                 doctor, config, routes, ...; until then use `python manage.py` inside
                 a project (see docs/cli.md)

exit codes: 0 success, 1 runtime error, 2 usage error
"""


def usage() -> str:
    """Return the usage text that ``--help`` prints."""
    return _USAGE


def _write(stream: TextIO, text: str) -> None:
    stream.write(text)
    stream.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the program with ``argv`` (default ``sys.argv[1:]``) and return its exit code.

    The console script passes the result to ``sys.exit``; tests call it directly.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        _write(sys.stderr, _USAGE)
        return EXIT_RUNTIME
    first = args[0]
    if first in ("-h", "--help", "help"):
        _write(sys.stdout, _USAGE)
        return EXIT_OK
    if first in ("-V", "--version"):
        _write(sys.stdout, f"{PROG} {__version__}\n")
        return EXIT_OK
    kind = "option" if first.startswith("-") else "command"
    _write(sys.stderr, f"{PROG}: unknown {kind} {first!r}; run `{PROG} --help` for usage\n")
    return EXIT_USAGE
