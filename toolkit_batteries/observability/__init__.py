"""The ``observability`` battery: spans and metrics to stdout, nowhere, or an OTLP collector.

Get the configured service from the registry (``services.observability()``) or a
container; ``stdout`` (the default) writes JSON lines, ``noop`` discards, ``otlp`` exports
through the OpenTelemetry SDK (the ``otlp`` extra). Importing this package imports no
OpenTelemetry module.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, base="Observability SpanHandle")
