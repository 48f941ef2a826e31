"""The errors of the schema migrator, each with the exit code the CLI contract gives it.

This package must not import :mod:`toolkit_batteries.cli` (the CLI calls it, not the
other way round), so it raises these; ``toolkit db`` maps each one to its ``CliError``
by :attr:`SqlMigrateError.exit_code`, named from :mod:`toolkit_batteries.cli.exitcodes`
(an import-free module the CLI package loads anyway).
"""

from __future__ import annotations

from ..exitcodes import EXIT_INVALID, EXIT_RUNTIME, EXIT_UNREACHABLE, EXIT_USAGE

__all__ = [
    "InvalidTargetError",
    "MigrationFailedError",
    "SqlMigrateError",
    "TargetMismatchError",
    "UnreachableTargetError",
]


class SqlMigrateError(Exception):
    """A migration that cannot go on; ``str()`` is one line without secrets."""

    #: The process exit code for the CLI (a runtime error unless a subclass says otherwise).
    exit_code = EXIT_RUNTIME

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        #: One line telling the user what to do, or ``None``.
        self.hint = hint


class MigrationFailedError(SqlMigrateError):
    """The database refused a statement (everything was rolled back), or a ledger row is bad."""


class TargetMismatchError(SqlMigrateError):
    """``--adapter`` and ``--dsn`` disagree (a usage error)."""

    exit_code = EXIT_USAGE


class InvalidTargetError(SqlMigrateError):
    """The DSN cannot be parsed (invalid input)."""

    exit_code = EXIT_INVALID


class UnreachableTargetError(SqlMigrateError):
    """The database server or file cannot be reached."""

    exit_code = EXIT_UNREACHABLE
