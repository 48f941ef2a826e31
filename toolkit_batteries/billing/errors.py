"""The errors of the billing battery, in one module.

The modules that defined them before re-import them, so old import paths keep working.
"""

from __future__ import annotations

from toolkit_batteries.core.errors import ToolkitError

__all__ = [
    "BillingError",
    "IdempotencyConflictError",
    "IdempotencyMismatchError",
    "IllegalTransitionError",
    "ProviderError",
    "SubscriptionNotFoundError",
    "WebhookSignatureError",
    "WebhookTooLargeError",
]


class BillingError(ToolkitError):
    """Base of the billing battery's runtime errors."""

    code = "internal"


class ProviderError(BillingError):
    """The provider refused or failed a call (names the operation and the HTTP status)."""

    code = "unavailable"

    def __init__(self, instance: str, operation: str, status: int | None, reason: str = "") -> None:
        self.instance, self.operation, self.status = instance, operation, status
        self.code = "failed_precondition" if status and 400 <= status < 500 else "unavailable"
        shown = f"HTTP {status}" if status else "no answer"
        extra = f", {reason}" if reason else ""
        super().__init__(f"billing.{instance}: {operation} failed ({shown}{extra})")


class SubscriptionNotFoundError(BillingError, LookupError):
    """The provider (or the stub) has no such subscription."""

    code = "not_found"
    params = ("instance",)
    template = "billing.{instance}: no such subscription"


class IdempotencyConflictError(BillingError):
    """The first call with this idempotency key is still running."""

    code = "already_exists"
    params = ("instance", "operation")
    template = "billing.{instance}: {operation} with this idempotency key is still in progress"


class IdempotencyMismatchError(BillingError, ValueError):
    """The idempotency key was used before with other arguments."""

    code = "invalid_argument"
    params = ("instance", "operation")
    template = "billing.{instance}: {operation}: the idempotency key was used with other arguments"


class WebhookSignatureError(BillingError, ValueError):
    """A webhook's signature is missing, wrong or outside the timestamp tolerance."""

    code = "invalid_argument"
    params = ("instance", "reason")
    template = "billing.{instance}: webhook refused: {reason}"


class WebhookTooLargeError(BillingError, ValueError):
    """A webhook body is larger than ``max_webhook_bytes`` (it was not parsed)."""

    code = "payload_too_large"
    params = ("instance", "limit")
    template = "billing.{instance}: webhook body over max_webhook_bytes ({limit})"


class IllegalTransitionError(ToolkitError, ValueError):
    """A status change the state machine refuses (names the two statuses only)."""

    code = "failed_precondition"
    params = ("instance", "current", "target")
    template = "billing.{instance}: a subscription cannot go from {current} to {target}"
