"""The payment battery's errors: unknown or invalid payments, idempotency-key misuse,
provider refusals, webhooks refused before or after their signature, illegal transitions.

``payment.base`` re-exports them and the modules that raise them import them from here,
so old import paths keep working.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from toolkit_batteries.core import errors
from toolkit_batteries.core.errors import (
    InvalidArgumentError,
    NotFoundError,
    NotSupportedError,
    ToolkitError,
)

if TYPE_CHECKING:
    from .states import PaymentState

__all__ = [
    "IdempotencyKeyReusedError",
    "IllegalTransitionError",
    "InvalidPaymentError",
    "OperationInProgressError",
    "PaymentError",
    "PaymentNotFoundError",
    "PaymentNotSupportedError",
    "PaymentProviderError",
    "WebhookPayloadError",
    "WebhookSignatureError",
    "WebhookTooLargeError",
]


class PaymentError(ToolkitError):
    """Base of the payment battery's runtime errors; messages never hold a secret."""

    code = "payment_error"
    #: The prefix of the messages of the core families (``core.errors``) it joins.
    service: ClassVar[str] = "payment"


class PaymentNotFoundError(NotFoundError, PaymentError):
    """No payment with that id in this instance."""

    template = "payment.{instance}: no payment {payment_id}"


class InvalidPaymentError(InvalidArgumentError, PaymentError):
    """An argument that breaks the rules (amount, currency, metadata, refund amount)."""

    template = 'payment.{instance}: "{field}" {reason}'


class IdempotencyKeyReusedError(PaymentError):
    """An idempotency key already used for a different request (another payment or amount)."""

    code = "failed_precondition"
    template = (
        "payment.{instance}: this idempotency key was used for a different {kind}; "
        "use a new key per operation"
    )


class OperationInProgressError(PaymentError):
    """The same idempotency key is being processed right now by another caller."""

    code = "already_exists"

    template = "payment.{instance}: a {kind} with this idempotency key is in progress"


class PaymentNotSupportedError(NotSupportedError, PaymentError):
    """The provider has no such operation (``payment_b`` has no separate capture)."""


class PaymentProviderError(PaymentError):
    """The provider refused or could not be reached.

    The message names the instance, the HTTP status and the provider's machine-readable
    error code; the provider's human text is kept in ``provider_message`` only.
    """

    code = "unavailable"

    def __init__(
        self,
        instance: str,
        operation: str,
        *,
        status: int | None = None,
        provider_code: str = "",
        provider_message: str = "",
    ) -> None:
        self.instance = instance
        self.status = status
        self.provider_code = provider_code
        self.provider_message = provider_message
        if status is not None and 400 <= status < 500 and status not in (401, 403, 429):
            self.code = "failed_precondition"
        what = f"HTTP {status}" if status is not None else "no answer"
        code = f" ({provider_code})" if provider_code else ""
        super().__init__(f"payment.{instance}: the provider refused {operation}: {what}{code}")


class WebhookTooLargeError(errors.WebhookTooLargeError, PaymentError):
    """A webhook body over ``max_webhook_bytes``; refused before it is parsed."""


class WebhookPayloadError(InvalidArgumentError, PaymentError):
    """A verified webhook whose body is not a JSON object of the provider's shape."""

    template = "payment.{instance}: webhook body {reason}"


class WebhookSignatureError(InvalidArgumentError):
    """A webhook failed verification; the message says which check, never a value."""

    template = "payment.{instance}: webhook signature verification failed: {reason}"


class IllegalTransitionError(ToolkitError, ValueError):
    """A payment was asked to move to a state its current state does not lead to."""

    code = "failed_precondition"

    def __init__(
        self,
        instance: str,
        payment_id: str,
        current: PaymentState,
        target: PaymentState,
        *,
        action: str = "",
    ) -> None:
        self.instance = instance
        self.payment_id = payment_id
        self.current = current
        self.target = target
        if action == "capture":
            super().__init__(
                f"payment.{instance}: payment {payment_id} cannot be captured: it is {current}, "
                "and only an authorized payment (created with capture=False) can be"
            )
            return
        from .states import TRANSITIONS  # local: states imports this module

        allowed = ", ".join(sorted(TRANSITIONS[current])) or "nothing (final state)"
        super().__init__(
            f"payment.{instance}: payment {payment_id} cannot go from {current} to {target} "
            f"(from {current} it may go to: {allowed})"
        )
