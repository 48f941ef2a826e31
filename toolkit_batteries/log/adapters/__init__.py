"""The log adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter is opened, so the structlog-based
adapters cost nothing to a project that logs through ``slog``. The vendor alias
``zerolog`` -> ``log_b`` lives in the shared ``VENDOR_ALIASES`` table of
:mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS"]

ADAPTERS: dict[str, str] = {
    "slog": "toolkit_batteries.log.adapters.slog.SlogLogger",
    "noop": "toolkit_batteries.log.adapters.noop.NoopLogger",
    "log_b": "toolkit_batteries.log.adapters.log_b.JSONLogger",
    "pretty": "toolkit_batteries.log.adapters.pretty.PrettyLogger",
}
