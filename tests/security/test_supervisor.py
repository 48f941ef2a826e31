"""Issue 12 defect 9: the ``queue_work --pool processes`` supervisor, with real processes.

On the landed code a SIGTERM during the one-second restart sleep spawned a child nobody
signalled and the supervisor hung waiting for it; a child that always crashed was
restarted every second forever. Every wait here is bounded by its own timeout.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.processes import wait_for
from toolkit_batteries.queue.supervisor import Supervisor

ROOT = Path(__file__).resolve().parents[2]

#: A child that records its pid, then runs until SIGTERM (exit 0) or crashes at once
#: when its pid file says it is the crashing kind.
CHILD = r"""
import os, signal, sys, time
log, mode = sys.argv[1], sys.argv[2]
with open(log, "a") as f:
    f.write(f"{os.getpid()}\n")
if mode == "crash":
    sys.exit(3)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
while True:
    time.sleep(0.05)
"""

#: The supervisor under test, in its own process so it can receive a real SIGTERM:
#: two children, the second always crashes, the restart wait is 3 s.
SUPERVISOR = r"""
import sys
from tests.support.processes import wait_for
from toolkit_batteries.queue.supervisor import Supervisor
log = sys.argv[1]
steady = [sys.executable, "-c", sys.argv[2], log, "steady"]
crash = [sys.executable, "-c", sys.argv[2], log, "crash"]

class Mixed(Supervisor):
    def _spawn(self):
        # slot 0 stays up, every other spawn crashes
        self.argv = steady if not self.children else crash
        return super()._spawn()

code = Mixed(steady, count=2, backoff=3.0, log=lambda line: print(line, flush=True)).run()
print(f"exit {code}", flush=True)
sys.exit(code)
"""


def pids(log: Path) -> list[int]:
    return [int(line) for line in log.read_text().split()] if log.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); read its state when /proc has it.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def read_until(proc: subprocess.Popen[str], marker: str, timeout: float) -> list[str]:
    """Read ``proc``'s stdout lines until one contains ``marker``; fail at ``timeout``."""
    import selectors

    lines: list[str] = []
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if selector.select(timeout=max(0.0, deadline - time.monotonic())):
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if marker in line:
                return lines
    raise AssertionError(f"{marker!r} not printed within {timeout}s: {lines}")


def test_sigterm_during_the_restart_wait_leaves_no_orphan_and_the_supervisor_exits(
    tmp_path: Path,
) -> None:
    log = tmp_path / "pids"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", SUPERVISOR, str(log), CHILD],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        read_until(proc, "restarting in 3s", timeout=30)  # the crashed child's wait began
        # The steady child may still be starting on a loaded machine: signal once both
        # first children have recorded themselves (well inside the 3 s wait).
        wait_for(lambda: len(pids(log)) >= 2, timeout=2.5, what="both first children")
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=15)
        assert code == 1  # a child had failed; the supervisor says so and stops
        # The supervisor is gone, so nothing can spawn any more: exactly the two first
        # children ever started, and both are gone too (no orphan).
        started = pids(log)
        assert len(started) == 2, started
        assert not [pid for pid in started if alive(pid)]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        for pid in pids(log):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_an_always_crashing_child_exhausts_the_restart_budget_and_exits_non_zero(
    tmp_path: Path,
) -> None:
    log = tmp_path / "pids"
    lines: list[str] = []
    supervisor = Supervisor(
        [sys.executable, "-c", CHILD, str(log), "crash"],
        count=1,
        max_restarts=3,
        window=60,
        backoff=0.2,
        max_backoff=0.4,
        log=lines.append,
    )
    started = time.monotonic()
    code = supervisor.run(install_signal_handlers=False)
    elapsed = time.monotonic() - started
    assert code == 1 and supervisor.gave_up
    assert len(pids(log)) == 4  # the first start and three restarts, then no more
    assert elapsed >= 0.2 + 0.4 + 0.4  # the backoff doubled, capped at max_backoff
    assert any("restarting in 0.2s" in line for line in lines)
    assert any("restarting in 0.4s" in line for line in lines)
    assert "keep failing" in lines[-1]


def test_the_budget_stops_the_healthy_children_too(tmp_path: Path) -> None:
    log = tmp_path / "pids"

    class Mixed(Supervisor):
        def _spawn(self) -> subprocess.Popen[bytes]:
            self.argv = [
                sys.executable,
                "-c",
                CHILD,
                str(log),
                "steady" if not self.children else "crash",
            ]
            return super()._spawn()

    supervisor = Mixed([], count=2, max_restarts=1, backoff=0.1, log=lambda line: None)
    code = supervisor.run(install_signal_handlers=False)
    assert code == 1 and supervisor.gave_up
    assert all(child.returncode is not None for child in supervisor.children)
    assert not [pid for pid in pids(log) if alive(pid)]
