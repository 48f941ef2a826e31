"""The ``log`` battery: levelled, structured logging with secrets masked.

Get the configured logger from the registry (``services.log()``) or a container
(``container.log()``); pick the adapter in settings (``slog``, ``noop``, ``log_b``,
``pretty``). The adapter classes are reachable by name through
:data:`toolkit_batteries.log.adapters.ADAPTERS`.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="DEBUG ERROR FATAL INFO LEVELS Logger WARN",
)
