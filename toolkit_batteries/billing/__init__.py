"""The ``billing`` battery: customers, subscriptions, invoices and provider webhooks.

``services.billing()`` returns the configured adapter: ``stub`` (the default: no provider,
no funds, no webhook verification), ``billing_a`` (alias ``stripe``) or ``billing_b``
(alias ``paddle``). Subscriptions move through one state machine (:mod:`.states`) and are
recorded in the ``toolkit_billing_subscription`` table; :mod:`.views` has a DRF webhook
view per provider. Imports no provider SDK.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base=(
        "Applied Billing BillingError Customer IdempotencyConflictError IdempotencyMismatchError "
        "Invoice ProviderError Subscription SubscriptionNotFoundError WebhookEvent "
        "WebhookSignatureError WebhookTooLargeError"
    ),
    states="IllegalTransitionError SubscriptionStatus",
)
