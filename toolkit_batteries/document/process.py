"""Run a renderer binary within the document bounds (deadline and output size).

The ``latex`` adapter's compiler and every adapter's rasteriser run through
:func:`run_bounded`: the process gets its own session (so a timeout kills the whole
group, children included), no standard input, and a watch on its output directory that
kills it as soon as the files there pass ``max_output_bytes``. Nothing here interprets
the binary's output; the callers read logs and files.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .base import DocumentTimeoutError, DocumentTooLargeError

__all__ = ["Finished", "directory_size", "run_bounded"]

#: Seconds between two looks at the process and its output directory: the first look
#: comes soon (short compiles end within milliseconds), later ones back off to the cap.
FIRST_POLL = 0.002
POLL_INTERVAL = 0.05
#: Largest part of a process's output kept for error messages.
MAX_CAPTURE = 64 * 1024


@dataclass(frozen=True, slots=True)
class Finished:
    """A process that exited by itself: its status and the start of its output."""

    returncode: int
    output: bytes


def directory_size(path: Path) -> int:
    """Return the total size of the regular files under ``path`` (not following links)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill ``process`` and its group, then reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


def run_bounded(
    command: Sequence[str],
    *,
    cwd: Path,
    deadline: float,
    max_bytes: int,
    instance: str,
    what: str,
    timeout_seconds: float,
    env: Mapping[str, str] | None = None,
    watch: Path | None = None,
) -> Finished:
    """Run ``command`` in ``cwd`` until it exits; kill it past ``deadline`` or ``max_bytes``.

    ``deadline`` is on :func:`time.monotonic`; ``max_bytes`` bounds the files under
    ``watch`` (default ``cwd``). Raises :class:`DocumentTimeoutError` or
    :class:`DocumentTooLargeError` (naming ``what``), ``FileNotFoundError`` when the
    binary does not exist.
    """
    watched = watch or cwd
    output_path = cwd.parent / f".{cwd.name}.out"
    with open(output_path, "w+b") as output:
        process = subprocess.Popen(
            list(command),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
        interval = FIRST_POLL
        try:
            while True:
                try:
                    returncode = process.wait(timeout=interval)
                    break
                except subprocess.TimeoutExpired:
                    interval = min(interval * 1.5, POLL_INTERVAL)
                if time.monotonic() >= deadline:
                    _kill(process)
                    raise DocumentTimeoutError(
                        instance, f"{what} did not finish within timeout ({timeout_seconds:g}s)"
                    )
                if directory_size(watched) > max_bytes:
                    _kill(process)
                    raise DocumentTooLargeError(
                        instance, f"{what} wrote more than max_output_bytes"
                    )
        except BaseException:
            if process.poll() is None:
                _kill(process)
            raise
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)  # stray children of the group
        output.seek(0)
        captured = output.read(MAX_CAPTURE)
    with contextlib.suppress(OSError):
        output_path.unlink()
    if directory_size(watched) > max_bytes:
        raise DocumentTooLargeError(instance, f"{what} wrote more than max_output_bytes")
    return Finished(returncode, captured)
