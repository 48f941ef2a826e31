"""The start instant and the recording dispatcher the scheduler tests share."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

T0 = datetime(2025, 1, 6, 10, 0, 30, tzinfo=UTC)  # a Monday, 30 s into 10:00 UTC


class Recorder:
    """A dispatcher recording every call (thread-safe), returning increasing ids."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self._lock = threading.Lock()

    def dispatch(self, job: Any, args: Any = (), kwargs: Any = None) -> str:
        with self._lock:
            self.calls.append((job.name, tuple(args), dict(kwargs or {})))
            return str(len(self.calls))
