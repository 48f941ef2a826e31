"""The process supervisor behind ``queue_work --pool processes``.

It starts ``count`` copies of one command, forwards SIGTERM and SIGINT to them, and
restarts a child that dies while no signal asked it to, under two rules that keep a
broken deployment from looping forever:

* **backoff**: the n-th consecutive restart of a slot waits ``backoff * 2**(n-1)``
  seconds (capped at ``max_backoff``); a child that stayed up ``stable_after`` seconds
  resets its slot's count;
* **budget**: more than ``max_restarts`` restarts within ``window`` seconds (all slots
  together) means the children cannot run: the supervisor stops the others and exits 1.

A signal is honoured at any moment, the restart wait included: the wait is interruptible,
the stop flag is checked again right before a child is spawned, and a child spawned while
a signal was arriving is signalled at once, so no child is ever left running unsignalled
and the supervisor never waits on a child nobody told to stop.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["Supervisor"]

_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Supervisor:
    """Run and restart ``count`` child processes of ``argv`` until signalled."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        count: int,
        env: Mapping[str, str] | None = None,
        restart: bool = True,
        max_restarts: int = 5,
        window: float = 60.0,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        stable_after: float = 10.0,
        poll: float = 0.1,
        log: Callable[[str], None] = print,
    ) -> None:
        """``restart=False`` for bounded children (``--once``): they may exit on their own."""
        if count < 1:
            raise ValueError("count must be at least 1")
        self.argv = list(argv)
        self.count = count
        self.env = dict(env) if env is not None else None
        self.restart = restart
        self.max_restarts = max_restarts
        self.window = window
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.stable_after = stable_after
        self.poll = poll
        self.log = log
        self.children: list[subprocess.Popen[bytes]] = []
        self.stopping = threading.Event()
        self.gave_up = False
        self._signum = signal.SIGTERM
        self._restarts: deque[float] = deque()

    def _spawn(self) -> subprocess.Popen[bytes]:
        child = subprocess.Popen(self.argv, env=self.env)
        # A signal that landed between the caller's check and now found no child to
        # forward to: tell this one ourselves.
        if self.stopping.is_set():
            _signal(child, self._signum)
        return child

    def _on_signal(self, signum: int, frame: Any) -> None:
        self._signum = signum
        self.stopping.set()
        for child in list(self.children):
            _signal(child, signum)

    def stop(self, signum: int = signal.SIGTERM) -> None:
        """Ask every child to stop (what a SIGTERM to the supervisor does)."""
        self._on_signal(signum, None)

    def run(self, *, install_signal_handlers: bool = True) -> int:
        """Supervise until every child is gone; return 0 when all exited 0, else 1."""
        previous: dict[int, Any] = {}
        if install_signal_handlers:
            previous = {s: signal.signal(s, self._on_signal) for s in _SIGNALS}
        try:
            return self._loop()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _loop(self) -> int:
        started: list[float] = []
        for _ in range(self.count):
            if self.stopping.is_set():
                break
            self.children.append(self._spawn())
            started.append(time.monotonic())
        self.log(
            f"queue_work: supervising {len(self.children)} worker processes "
            f"(pids {', '.join(str(c.pid) for c in self.children)})"
        )
        streak = [0] * len(self.children)
        due: list[float | None] = [None] * len(self.children)
        while (
            any(c.poll() is None for c in self.children)
            or any(d is not None for d in due)
            or (self.restart and not self.stopping.is_set())
        ):
            now = time.monotonic()
            if self.stopping.is_set():
                due = [None] * len(due)  # restarts pending at a signal never happen
            elif self.restart:
                for index, child in enumerate(self.children):
                    if child.poll() is None:
                        continue
                    if due[index] is None:
                        if now - started[index] >= self.stable_after:
                            streak[index] = 0
                        streak[index] += 1
                        if not self._budget_left(now):
                            self._give_up(child)
                            due = [None] * len(due)
                            break
                        delay = min(self.max_backoff, self.backoff * 2 ** (streak[index] - 1))
                        due[index] = now + delay
                        self.log(
                            f"queue_work: worker pid {child.pid} exited with "
                            f"{child.returncode}; restarting in {delay:g}s"
                        )
                    elif now >= due[index]:
                        if self.stopping.is_set():  # re-checked right before spawning
                            break
                        self.children[index] = self._spawn()
                        started[index] = time.monotonic()
                        due[index] = None
            if self.stopping.is_set():
                time.sleep(self.poll)  # only the children's exits are left to wait for
            else:
                self.stopping.wait(self.poll)  # a signal ends the wait at once
        if self.gave_up:
            return 1
        return 0 if all(c.returncode == 0 for c in self.children) else 1

    def _budget_left(self, now: float) -> bool:
        restarts = self._restarts
        while restarts and now - restarts[0] > self.window:
            restarts.popleft()
        if len(restarts) >= self.max_restarts:
            return False
        restarts.append(now)
        return True

    def _give_up(self, child: subprocess.Popen[bytes]) -> None:
        self.gave_up = True
        self.log(
            f"queue_work: worker processes keep failing ({self.max_restarts} restarts within "
            f"{self.window:g}s, last exit {child.returncode}); stopping the others and exiting"
        )
        self.stopping.set()
        for other in self.children:
            _signal(other, signal.SIGTERM)


def _signal(child: subprocess.Popen[bytes], signum: int) -> None:
    if child.poll() is None:
        with contextlib.suppress(ProcessLookupError):  # it exited between poll and send
            child.send_signal(signum)
