"""The observability adapters; the OpenTelemetry SDK costs nothing to a project on
``stdout`` or ``noop``.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(
    __name__, "stdout.StdoutObservability noop.NoopObservability otlp.OTLPObservability"
)
