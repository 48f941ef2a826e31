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
