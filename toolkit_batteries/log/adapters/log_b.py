"""The ``log_b`` adapter (alias ``zerolog``): one JSON object per line on stderr.

Each line is ``{"timestamp": ISO-8601 UTC, "level": "info", "message": ..., "fields": {...}}``.
Fields nest under ``"fields"`` so a field named ``level`` or ``message`` can never
overwrite the envelope. Rendering is structlog's ``JSONRenderer`` on a private processor
chain, independent of any global ``structlog.configure()`` the project makes.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

import structlog
from structlog.typing import EventDict, WrappedLogger

from toolkit_batteries.log.base import LEVELS, Logger

__all__ = ["JSONLogger"]


class JSONLogger(Logger):
    """Write JSON lines to ``stream`` (``sys.stderr`` when opened by the container)."""

    adapter_name = "log_b"

    def __init__(self, *, min_level: int = 0, stream: TextIO | None = None) -> None:
        super().__init__(min_level=min_level)
        self._logger = structlog.BoundLogger(
            structlog.WriteLogger(stream or sys.stderr),
            processors=[
                structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
                _envelope,
                structlog.processors.JSONRenderer(),
            ],
            context={},
        )

    def _emit(self, level: int, msg: str, fields: dict[str, Any]) -> None:
        self._logger.msg(msg, level=LEVELS[level], fields=fields)


def _envelope(_logger: WrappedLogger, _method: str, event: EventDict) -> EventDict:
    """Put the keys in reading order and call the message ``message``."""
    return {
        "timestamp": event["timestamp"],
        "level": event["level"],
        "message": event["event"],
        "fields": event["fields"],
    }
