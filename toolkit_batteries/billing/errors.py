"""The billing battery's errors: provider failures, unknown subscriptions, idempotency
conflicts, refused webhooks and transitions the state machine forbids.

``billing.base`` and ``billing.states`` re-import them, so old import paths keep working.
"""

from __future__ import annotations

from typing import ClassVar

from toolkit_batteries.core import errors
from toolkit_batteries.core.errors import (
    InvalidArgumentError,
    NotFoundError,
    ToolkitError,
)

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
    #: The prefix of the messages of the core families (``core.errors``) it joins.
    service: ClassVar[str] = "billing"


class ProviderError(BillingError):
    """The provider refused or failed a call (names the operation and the HTTP status)."""

    code = "unavailable"

    def __init__(self, instance: str, operation: str, status: int | None, reason: str = "") -> None:
        self.instance, self.operation, self.status = instance, operation, status
        self.code = "failed_precondition" if status and 400 <= status < 500 else "unavailable"
        shown = f"HTTP {status}" if status else "no answer"
        extra = f", {reason}" if reason else ""
        super().__init__(f"billing.{instance}: {operation} failed ({shown}{extra})")


class SubscriptionNotFoundError(NotFoundError, BillingError):
    """The provider (or the stub) has no such subscription."""

    template = "billing.{instance}: no such subscription"


class IdempotencyConflictError(BillingError):
    """The first call with this idempotency key is still running."""

    code = "already_exists"

    template = "billing.{instance}: {operation} with this idempotency key is still in progress"


class IdempotencyMismatchError(InvalidArgumentError, BillingError):
    """The idempotency key was used before with other arguments."""

    template = "billing.{instance}: {operation}: the idempotency key was used with other arguments"


class WebhookSignatureError(InvalidArgumentError, BillingError):
    """A webhook's signature is missing, wrong or outside the timestamp tolerance."""

    template = "billing.{instance}: webhook refused: {reason}"


class WebhookTooLargeError(errors.WebhookTooLargeError, BillingError, ValueError):
    """A webhook body is larger than ``max_webhook_bytes`` (it was not parsed)."""


class IllegalTransitionError(ToolkitError, ValueError):
    """A status change the state machine refuses (names the two statuses only)."""

    code = "failed_precondition"
    template = "billing.{instance}: a subscription cannot go from {current} to {target}"
