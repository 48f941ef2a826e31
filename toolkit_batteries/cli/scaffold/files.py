"""A plan of file changes: checked first, then either reported (``--dry-run``) or written.

Every scaffolding command builds the complete list of changes before touching the disk,
so validation failures write nothing and a dry run is exactly the real run minus the
writes. Each file is written atomically (a temporary file renamed over the target), so an
interrupted run never leaves half a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from toolkit_batteries.core.files import atomic_write

from ..output import CliError, Output

__all__ = ["Change", "Plan", "atomic_write", "refuse_existing"]

Action = Literal["create", "overwrite", "append", "edit"]

_DONE = {"create": "created", "overwrite": "overwrote", "append": "appended to", "edit": "edited"}
_WOULD = {
    "create": "would write",
    "overwrite": "would write (overwrite)",
    "append": "would append to",
    "edit": "would edit",
}


@dataclass(frozen=True)
class Change:
    """One file and its full new content."""

    path: Path
    content: str | bytes
    action: Action


@dataclass
class Plan:
    """The changes of one command, relative to ``root`` for display."""

    root: Path
    changes: list[Change] = field(default_factory=list)

    def add(self, path: Path, content: str | bytes, action: Action | None = None) -> None:
        """Plan ``path`` to hold ``content``; ``action`` defaults to create or overwrite."""
        if action is None:
            action = "overwrite" if path.exists() else "create"
        self.changes.append(Change(path, content, action))

    def rel(self, path: Path) -> str:
        """Return ``path`` relative to the plan's root (as given when outside it)."""
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(path)

    @property
    def files(self) -> list[str]:
        """Return the planned files, relative to the root."""
        return [self.rel(change.path) for change in self.changes]

    def report(self, out: Output, *, dry_run: bool, indent: str = "") -> None:
        """Print one line per change: what was done, or ``dry run: would ...``."""
        for change in self.changes:
            if dry_run:
                out.line(f"{indent}dry run: {_WOULD[change.action]} {self.rel(change.path)}")
            else:
                out.line(f"{indent}{_DONE[change.action]} {self.rel(change.path)}")

    def apply(self) -> None:
        """Write every change, each atomically, creating parent directories."""
        for change in self.changes:
            atomic_write(change.path, change.content)


def refuse_existing(path: Path, shown: str, force: bool) -> None:
    """Fail (exit 1) when ``path`` exists and ``--force`` was not given."""
    if path.exists() and not force:
        raise CliError(
            f"{shown} already exists; nothing was written",
            hint="pass --force to overwrite it",
        )
