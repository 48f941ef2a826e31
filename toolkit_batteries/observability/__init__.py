"""The ``observability`` battery: spans and metrics to stdout, nowhere, or an OTLP collector.

Get the configured service from the registry (``services.observability()``) or a
container; ``stdout`` (the default) writes JSON lines, ``noop`` discards, ``otlp`` exports
through the OpenTelemetry SDK (the ``otlp`` extra). Importing this package imports no
OpenTelemetry module.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Observability, SpanHandle

__all__ = ["Observability", "SpanHandle"]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Observability": "base",
    "SpanHandle": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
