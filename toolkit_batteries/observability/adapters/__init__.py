"""The observability adapters, by canonical name (default first, as in the catalog).

Values are dotted paths imported only when an adapter opens, so the OpenTelemetry SDK
costs nothing to a project on ``stdout`` or ``noop``.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "stdout": "toolkit_batteries.observability.adapters.stdout.StdoutObservability",
    "noop": "toolkit_batteries.observability.adapters.noop.NoopObservability",
    "otlp": "toolkit_batteries.observability.adapters.otlp.OTLPObservability",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {}
