"""The error types commands raise (each with its exit code) and the text / ``--json`` channel.

A command never calls ``sys.exit`` or prints an envelope itself: it returns a
:class:`Result` or raises a :class:`CliError`, and :func:`toolkit_batteries.cli.main` turns
either into the exit code and, under ``--json``, the single envelope line on stdout.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from . import exitcodes as codes

__all__ = [
    "CheckFailedError",
    "CliError",
    "InvalidInputError",
    "Output",
    "Result",
    "UnreachableError",
    "UsageError",
    "envelope",
]


class CliError(Exception):
    """A command failed; ``str(error)`` is the one-line message (never a secret)."""

    exit_code = codes.EXIT_RUNTIME

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        data: Any = None,
        exit_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.hint = hint
        self.data = data
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(CliError):
    """Bad or missing flags or arguments (exit 2)."""

    exit_code = codes.EXIT_USAGE


class InvalidInputError(CliError):
    """Schema diagnostics, invalid configuration or an unsafe path (exit 3)."""

    exit_code = codes.EXIT_INVALID


class CheckFailedError(CliError):
    """A check found something: breaking changes, unformatted files, failing services (4)."""

    exit_code = codes.EXIT_CHECK_FAILED


class UnreachableError(CliError):
    """A required service (database, Redis, broker) did not answer (exit 5)."""

    exit_code = codes.EXIT_UNREACHABLE


@dataclass
class Result:
    """What a successful command returns: ``data`` goes into the ``--json`` envelope."""

    data: Any = None
    exit_code: int = codes.EXIT_OK
    hint: str | None = None
    error: str | None = None
    breadcrumbs: list[str] = field(default_factory=list)


def envelope(
    command: str,
    exit_code: int,
    *,
    data: Any = None,
    error: str | None = None,
    hint: str | None = None,
    breadcrumbs: list[str] | None = None,
) -> str:
    """Return the one-line JSON envelope of the CLI contract (keys in contract order)."""
    body: dict[str, Any] = {
        "ok": exit_code == codes.EXIT_OK,
        "command": command,
        "exitCode": exit_code,
    }
    if data is not None:
        body["data"] = data
    if error:
        body["error"] = error
    if hint:
        body["hint"] = hint
    if breadcrumbs:
        body["breadcrumbs"] = list(breadcrumbs)
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False, default=str)


def _no_hint() -> bool:
    """Whether ``TOOLKIT_NO_HINT`` asks for no hint footers (``1``, ``true``, ``yes``)."""
    return os.environ.get("TOOLKIT_NO_HINT", "").strip().lower() in {"1", "true", "yes", "on"}


class Output:
    """Where a command writes: human lines on stdout, notes and diagnostics on stderr.

    Under ``--json`` stdout belongs to the envelope alone, so :meth:`line` is silent and
    :meth:`progress` too; :meth:`err` still writes to stderr (diagnostics stay readable).
    Progress appears only when stderr is a terminal.
    """

    def __init__(
        self,
        *,
        json_mode: bool = False,
        quiet: bool = False,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
    ) -> None:
        self.json_mode = json_mode
        self.quiet = quiet
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr

    def line(self, text: str = "") -> None:
        """Print one line of human output (nothing under ``--json``)."""
        if not self.json_mode:
            self.stdout.write(text + "\n")
            self.stdout.flush()

    def err(self, text: str) -> None:
        """Print one line on stderr (diagnostics, warnings), in every mode."""
        self.stderr.write(text + "\n")
        self.stderr.flush()

    def hint(self, text: str) -> None:
        """Print a hint footer on stderr unless ``--quiet``, ``--json`` or
        ``TOOLKIT_NO_HINT`` (for agents that read stderr and want no advice in it)."""
        if not (self.quiet or self.json_mode or _no_hint()):
            self.err(text)

    @property
    def interactive(self) -> bool:
        """Whether progress may be drawn: stderr is a terminal and not ``--json``."""
        isatty = getattr(self.stderr, "isatty", None)
        return bool(not self.json_mode and isatty is not None and isatty())

    def progress(self, done: int, total: int, label: str = "") -> None:
        """Draw ``[done/total] label`` on one terminal line; nothing when not interactive."""
        if not self.interactive:
            return
        end = "\n" if done >= total else ""
        self.stderr.write(f"\r\x1b[2K[{done}/{total}] {label}{end}")
        self.stderr.flush()
