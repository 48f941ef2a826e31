"""Guards for names and paths taken from the command line (no traversal, ever).

Every file a command writes is under a base directory the user chose; a name or relative
path that would leave it (``..``, an absolute path, a slash in a name) is refused with
:class:`PathTraversalError` (exit 3) before anything is written.
"""

from __future__ import annotations

import re
from pathlib import Path

from .output import InvalidInputError

__all__ = ["PathTraversalError", "check_name", "inside"]

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


class PathTraversalError(InvalidInputError):
    """A name or path would escape the directory it must stay in."""


def check_name(name: str, what: str = "name") -> str:
    """Return ``name`` if it is letters, digits, ``-`` and ``_`` only; raise otherwise."""
    if not _NAME.fullmatch(name or ""):
        raise PathTraversalError(
            f"invalid {what} {name!r}: use letters, digits, '-' and '_' only "
            "(no '..', slashes or absolute paths)"
        )
    return name


def inside(base: Path, relative: str | Path) -> Path:
    """Return ``base / relative`` resolved, refusing anything that escapes ``base``."""
    rel = Path(relative)
    if rel.is_absolute() or ".." in rel.parts:
        raise PathTraversalError(f"path escapes the target directory: {str(relative)!r}")
    root = base.resolve()
    target = (root / rel).resolve()
    if target != root and root not in target.parents:
        raise PathTraversalError(f"path escapes the target directory: {str(relative)!r}")
    return target
