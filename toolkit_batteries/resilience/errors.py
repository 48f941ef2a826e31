"""Errors a resilience policy raises instead of (or around) the call's own error."""

from __future__ import annotations

from toolkit_batteries.core.errors import ToolkitError

__all__ = [
    "BreakerOpenError",
    "BulkheadFullError",
    "OperationTimeoutError",
    "PolicyClosedError",
    "ResilienceError",
]


class ResilienceError(ToolkitError):
    """Base of the errors the policy itself raises (the call was refused or cut short)."""

    code = "resilience_error"


class BreakerOpenError(ResilienceError):
    """The circuit breaker refused the call: it is open, or half-open with no probe free.

    ``retry_after`` is the seconds until the breaker half-opens (0 when half-open).
    """

    code = "breaker_open"

    def __init__(self, instance: str, breaker: str, retry_after: float, state: str) -> None:
        self.instance = instance
        self.breaker = breaker
        self.retry_after = max(0.0, retry_after)
        self.state = state
        if state == "open":
            detail = f"is open; it half-opens in {self.retry_after:.3g}s"
        else:
            detail = "is half-open and its probes are all taken"
        super().__init__(f'resilience.{instance}: circuit breaker "{breaker}" {detail}')


class BulkheadFullError(ResilienceError):
    """The bulkhead refused the call: its queue is full, or no slot freed within max_wait."""

    code = "bulkhead_full"
    template = "resilience.{instance}: bulkhead full: {reason}"


class OperationTimeoutError(ResilienceError, TimeoutError):
    """The whole operation, retries and waits included, did not finish within ``timeout``.

    ``__cause__`` is the last attempt's error, if an attempt failed before time ran out.
    """

    code = "operation_timeout"

    def __init__(self, instance: str, timeout: float, attempts: int) -> None:
        self.instance = instance
        self.timeout = timeout
        self.attempts = attempts
        plural = "s" if attempts != 1 else ""
        super().__init__(
            f"resilience.{instance}: operation did not finish within {timeout:g}s "
            f"({attempts} attempt{plural})"
        )


class PolicyClosedError(ResilienceError, RuntimeError):
    """The policy was closed (its container shut down)."""

    code = "resilience_closed"
    template = "resilience.{instance}: the policy is closed"
