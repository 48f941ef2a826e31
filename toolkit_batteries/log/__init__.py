"""The ``log`` battery: levelled, structured logging with secrets masked.

Get the configured logger from the registry (``services.log()``) or a container
(``container.log()``); pick the adapter in settings (``slog``, ``noop``, ``log_b``,
``pretty``). The adapter classes are reachable by name through
:data:`toolkit_batteries.log.adapters.ADAPTERS`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import DEBUG, ERROR, FATAL, INFO, LEVELS, WARN, Logger

__all__ = ["DEBUG", "ERROR", "FATAL", "INFO", "LEVELS", "WARN", "Logger"]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "DEBUG": "base",
    "ERROR": "base",
    "FATAL": "base",
    "INFO": "base",
    "LEVELS": "base",
    "Logger": "base",
    "WARN": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
