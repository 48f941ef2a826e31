"""The ``pretty`` adapter: aligned, human-readable lines for a developer's terminal.

Rendering is structlog's ``ConsoleRenderer``. Colours are on only when the stream is a
TTY (and ``NO_COLOR`` is unset), so redirected output stays free of escape codes.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

import structlog
from structlog.dev import ConsoleRenderer

from toolkit_batteries.log.base import LEVELS, Logger

__all__ = ["PrettyLogger"]

#: Keys ConsoleRenderer reads itself; a field with one of these names gets a ``_`` suffix.
_RESERVED = frozenset({"event", "level", "timestamp"})


class PrettyLogger(Logger):
    """Write coloured (on a TTY) console lines to ``stream`` (``sys.stderr`` by default)."""

    adapter_name = "pretty"

    def __init__(
        self, *, min_level: int = 0, stream: TextIO | None = None, colors: bool | None = None
    ) -> None:
        super().__init__(min_level=min_level)
        stream = stream or sys.stderr
        if colors is None:
            colors = stream.isatty() and "NO_COLOR" not in os.environ
        styles = ConsoleRenderer.get_default_level_styles(colors)
        styles["fatal"] = styles["critical"]
        self._logger = structlog.BoundLogger(
            structlog.WriteLogger(stream),
            processors=[
                structlog.processors.TimeStamper(fmt="%Y-%m-%d %H:%M:%S", utc=False),
                ConsoleRenderer(colors=colors, level_styles=styles),
            ],
            context={},
        )

    def _emit(self, level: int, msg: str, fields: dict[str, Any]) -> None:
        event = {(f"{key}_" if key in _RESERVED else key): value for key, value in fields.items()}
        self._logger.msg(msg, level=LEVELS[level], **event)
