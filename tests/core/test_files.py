"""``atomic_write``: whole files only, and the modes a user expects (not mkstemp's 0600)."""

from __future__ import annotations

import os
from pathlib import Path

from toolkit_batteries.core.files import atomic_write


def test_new_file_gets_the_umask_mode_not_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "a" / "new.py", "x = 1\n")
    finally:
        os.umask(old)
    target = tmp_path / "a" / "new.py"
    assert target.read_text() == "x = 1\n"
    assert target.stat().st_mode & 0o777 == 0o644


def test_existing_file_keeps_its_mode_and_no_temporary_is_left(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("old\n")
    target.chmod(0o750)
    atomic_write(target, b"#!/bin/sh\n")
    assert target.read_bytes() == b"#!/bin/sh\n"
    assert target.stat().st_mode & 0o777 == 0o750
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sh"]
