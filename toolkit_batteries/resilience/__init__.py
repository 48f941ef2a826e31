"""Retries, timeouts, circuit breakers and bulkheads around calls.

::

    from toolkit_batteries import services
    from toolkit_batteries.resilience import resilient

    rates = services.resilience().call(fetch_rates, "EUR")

    @resilient("payments")
    def charge(order): ...

Adapters: ``memory`` (default; breaker state per process) and ``kvserver`` (breaker state
shared through Redis). The delay arithmetic is the pure :func:`backoff`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backoff import backoff, max_attempts
    from .base import Policy, resilient
    from .errors import (
        BreakerOpenError,
        BulkheadFullError,
        OperationTimeoutError,
        PolicyClosedError,
        ResilienceError,
    )

__all__ = [
    "BreakerOpenError",
    "BulkheadFullError",
    "OperationTimeoutError",
    "Policy",
    "PolicyClosedError",
    "ResilienceError",
    "backoff",
    "max_attempts",
    "resilient",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "BreakerOpenError": "errors",
    "BulkheadFullError": "errors",
    "OperationTimeoutError": "errors",
    "Policy": "base",
    "PolicyClosedError": "errors",
    "ResilienceError": "errors",
    "backoff": "backoff",
    "max_attempts": "backoff",
    "resilient": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
