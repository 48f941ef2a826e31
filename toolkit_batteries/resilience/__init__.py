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

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    backoff="backoff max_attempts",
    base="Policy resilient",
    errors=(
        "BreakerOpenError BulkheadFullError OperationTimeoutError PolicyClosedError ResilienceError"
    ),
)
