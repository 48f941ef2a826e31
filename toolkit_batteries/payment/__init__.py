"""The ``payment`` battery: payments and refunds through a provider, and its webhooks.

Get the configured service from the registry (``services.payment()``) or a container
(``container.payment()``); pick ``stub`` (the default: no provider, no funds, webhooks
unverified), ``payment_a`` (alias ``stripe``) or ``payment_b`` (alias ``paddle``) in
settings. Payments are rows of :mod:`.models`, moved only along the state machine of
:mod:`.states`; webhooks arrive through the DRF views of :mod:`.views`.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base=(
        "IdempotencyKeyReusedError InvalidPaymentError OperationInProgressError Payment "
        "PaymentError PaymentNotFoundError PaymentNotSupportedError PaymentProviderError "
        "WebhookPayloadError WebhookTooLargeError"
    ),
    signatures="WebhookSignatureError",
    states="IllegalTransitionError PaymentState",
    values="WebhookEvent",
)
