"""``TOOLKIT_INTERACTIVE`` is a documented no-op: ``toolkit new`` never prompts, even on a TTY.

The command runs on a pseudo-terminal (stdin, stdout and stderr a real TTY, nobody typing),
with the variable set: it must finish from its flags alone, create the project, and say
once that the variable changes nothing.
"""

from __future__ import annotations

import os
import pty
import subprocess
import time
from pathlib import Path

from tests.cli.conftest import SCRIPT, base_env, run_toolkit

NOTE = "note: TOOLKIT_INTERACTIVE is set, but toolkit never prompts"


def test_new_on_a_terminal_with_toolkit_interactive_never_prompts(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    target = tmp_path / "shop"
    process = subprocess.Popen(
        [str(SCRIPT), "new", "shop", "--dir", str(target)],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=base_env(TOOLKIT_INTERACTIVE="1"),
        close_fds=True,
    )
    os.close(terminal)
    output = b""
    deadline = time.monotonic() + 120
    try:
        while process.poll() is None and time.monotonic() < deadline:
            try:
                output += os.read(controller, 4096)
            except OSError:
                break
        code = process.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        if process.poll() is None:
            process.kill()
        os.close(controller)
    text = output.decode(errors="replace")
    assert code == 0, text  # finished without a single keystroke
    assert (target / "manage.py").is_file()
    assert NOTE in text
    assert "?" not in text.replace("did you mean", "")  # no question was asked


def test_the_note_follows_the_hint_rules(tmp_path: Path) -> None:
    ran = run_toolkit("new", "--list-batteries", env=base_env(TOOLKIT_INTERACTIVE="yes"))
    assert ran.returncode == 0 and NOTE in ran.stderr
    quiet = run_toolkit("new", "--list-batteries", "-q", env=base_env(TOOLKIT_INTERACTIVE="1"))
    assert quiet.returncode == 0 and NOTE not in quiet.stderr
    unset = run_toolkit("new", "--list-batteries", env=base_env())
    assert NOTE not in unset.stderr
