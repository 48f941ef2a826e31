"""The ``noop`` adapter: discards every line."""

from __future__ import annotations

from typing import Any

from toolkit_batteries.log.base import Logger

__all__ = ["NoopLogger"]


class NoopLogger(Logger):
    """Discard everything; ``enabled()`` is False so callers skip building fields too."""

    adapter_name = "noop"

    def enabled(self, level: int) -> bool:
        """Return False: nothing is ever written."""
        return False

    def _emit(self, level: int, msg: str, fields: dict[str, Any]) -> None:
        """Write nothing (never reached, since no level is enabled)."""
