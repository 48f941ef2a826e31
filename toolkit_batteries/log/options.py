"""Options of the ``log`` service: only the minimum level is configurable."""

from __future__ import annotations

from toolkit_batteries.core.options import option, options_class

__all__ = ["LogOptions"]


@options_class
class LogOptions:
    """Options of ``log``; adapters ``slog`` (default), ``noop``, ``log_b``, ``pretty``."""

    min_level: int = option(
        0,
        min=0,
        max=4,
        doc="minimum level as an integer: 0 debug, 1 info, 2 warn, 3 error, 4 fatal",
    )
