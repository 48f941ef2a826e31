"""The ``log`` battery: levelled, structured logging with secrets masked.

Get the configured logger from the registry (``services.log()``) or a container
(``container.log()``); pick the adapter in settings (``slog``, ``noop``, ``log_b``,
``pretty``). The adapter classes are reachable by name through
:data:`toolkit_batteries.log.adapters.ADAPTERS`.
"""

from __future__ import annotations

from .base import DEBUG, ERROR, FATAL, INFO, LEVELS, WARN, Logger

__all__ = ["DEBUG", "ERROR", "FATAL", "INFO", "LEVELS", "WARN", "Logger"]
