"""Compare compiled files with their golden copies, or rewrite them when asked.

``TOOLKIT_UPDATE_GOLDEN=1`` rewrites the copies (and deletes stale ones) instead of
failing; every backend's golden test runs this one comparison.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def assert_golden(
    files: Mapping[str, str], root: Path, under: str = "", pattern: str = "*"
) -> None:
    """Assert ``files`` (path under ``root`` -> text) are the golden files below ``root/under``.

    Only files matching ``pattern`` below ``root/under`` count as golden copies.
    """
    base = root / under if under else root
    if os.environ.get("TOOLKIT_UPDATE_GOLDEN") == "1":
        for stale in base.rglob(pattern):
            if stale.is_file() and stale.relative_to(root).as_posix() not in files:
                stale.unlink()
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
    on_disk = {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in base.rglob(pattern)
        if p.is_file()
    }
    assert sorted(files) == sorted(on_disk), "set TOOLKIT_UPDATE_GOLDEN=1 to regenerate"
    for rel, text in files.items():
        assert text == on_disk[rel], f"{rel} differs from its golden copy"
