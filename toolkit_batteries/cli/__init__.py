"""The ``toolkit`` command-line program: dispatch, global flags, envelopes and exit codes.

``main`` peels the global flags (``--json``, ``-q``, ``--no-color``) from anywhere in
argv, finds the command in :mod:`.table`, imports only that command's module, parses its
flags and runs it. A command returns a :class:`~.output.Result` or raises a
:class:`~.output.CliError`; this module alone turns those into the exit code of the CLI
contract (0 ok, 1 runtime, 2 usage, 3 invalid input, 4 check failed, 5 unreachable) and,
under ``--json``, into exactly one envelope line on stdout.

``toolkit --help`` and ``--version`` import nothing but this module, the version string
and the static command table (no argparse, no Django), so they start in tens of ms.
"""

from .exitcodes import (
    EXIT_CHECK_FAILED,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_RUNTIME,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
)
from .program import main, usage

__all__ = [
    "EXIT_CHECK_FAILED",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_RUNTIME",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "main",
    "usage",
]
