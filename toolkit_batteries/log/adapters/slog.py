"""The ``slog`` adapter (default): standard-library ``logging``.

Lines go to the ``toolkit.app`` logger, so Django's ``LOGGING`` setting decides handlers,
formatters and levels. Fields travel two ways: rendered ``key=value`` after the message,
so a plain handler shows them, and as ``record.fields`` (a dict) for structured handlers.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from toolkit_batteries.log.base import STDLIB_LEVELS, Logger

__all__ = ["SlogLogger"]

_NEEDS_QUOTES = re.compile(r'[\s="\\]')

# logger.log <- _emit <- Logger._log <- Logger.info <- the caller: report the caller's line.
_CALLER = 4


class SlogLogger(Logger):
    """Log through a standard-library logger (``toolkit.app`` unless ``name`` is given)."""

    adapter_name = "slog"

    def __init__(self, *, min_level: int = 0, name: str = "toolkit.app") -> None:
        super().__init__(min_level=min_level)
        self._logger = logging.getLogger(name)

    def enabled(self, level: int) -> bool:
        """Tell whether ``min_level`` and the stdlib logger's own level both let ``level`` by."""
        return super().enabled(level) and self._logger.isEnabledFor(_stdlib(level))

    def _emit(self, level: int, msg: str, fields: dict[str, Any]) -> None:
        text = f"{msg} {logfmt(fields)}" if fields else msg
        # No args: the text is never %-formatted, so a "%" in a field is harmless.
        self._logger.log(_stdlib(level), text, extra={"fields": fields}, stacklevel=_CALLER)


def _stdlib(level: int) -> int:
    return STDLIB_LEVELS[min(max(level, 0), len(STDLIB_LEVELS) - 1)]


def logfmt(fields: dict[str, Any]) -> str:
    """Render fields as ``key=value`` pairs, quoting strings that hold spaces or quotes."""
    return " ".join(f"{key}={_value(value)}" for key, value in fields.items())


def _value(value: Any) -> str:
    if isinstance(value, str) and value and not _NEEDS_QUOTES.search(value):
        return value
    return json.dumps(value, ensure_ascii=False)
