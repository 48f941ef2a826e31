"""Write files the way every generator of the toolkit must: atomically, with sane modes.

A reader (Django's autoreloader, an editor, a second compile) never sees half a file:
content goes to a temporary file in the same directory, then ``os.replace`` swaps it in.
``tempfile.mkstemp`` creates files as 0600, so the temporary file gets the mode the target
already had, or for a new file the usual ``0666 & ~umask``, before the swap.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write"]


def atomic_write(path: Path, content: str | bytes) -> None:
    """Replace ``path`` with ``content`` (text is UTF-8, newlines untouched) atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8") if isinstance(content, str) else content
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask()
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
