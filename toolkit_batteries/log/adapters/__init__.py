"""The log adapters; the structlog-based ones cost nothing to a project that logs through
``slog`` (``zerolog`` selects ``log_b``, from the catalog row).
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(
    __name__, "slog.SlogLogger noop.NoopLogger log_b.JSONLogger pretty.PrettyLogger"
)
