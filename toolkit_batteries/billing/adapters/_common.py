"""What the two provider adapters share, on the provider base.

:class:`ProviderBilling` holds the options prelude (the credential, ``endpoint`` checked
by the outbound rules), ``open`` (with the warning for lifted rules), webhook
verification (the scheme's signature header, tolerance on the battery's clock, then the
JSON body, via :func:`toolkit_batteries.core.outbound.provider.signed_json`) and the one
error mapping of :meth:`ProviderBilling._failed`. An adapter adds its SDK client, its
calls and its event shapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, NoReturn, Self

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.core.outbound import provider
from toolkit_batteries.core.webhook_signatures import Scheme

from ..base import (
    Billing,
    ProviderError,
    SubscriptionNotFoundError,
    WebhookSignatureError,
    warn_lifted,
)

__all__ = ["CALLS", "TIMEOUT", "ProviderBilling"]

#: Seconds before a request gives up.
TIMEOUT = 30.0
#: The methods of a provider adapter that leave the process (traced by each adapter).
CALLS = (
    "_create_customer",
    "_create_subscription",
    "_get_subscription",
    "_cancel_subscription",
    "_list_invoices",
    "_checkout_url",
    "_portal_url",
    "ping",
)


class ProviderBilling(Billing):
    """A :class:`Billing` adapter over a provider SDK (options, webhooks, errors)."""

    #: The provider's webhook signature scheme.
    scheme: ClassVar[Scheme]

    def _prelude(self, options: Any, key_field: str, default: str) -> str:
        """Check the credential and ``endpoint``; keep them; return the credential."""
        self._key = provider.required(
            getattr(options, key_field),
            service="billing",
            field=key_field,
            adapter=self.adapter_name,
            instance=self.instance,
        )
        self._endpoint = provider.endpoint(
            options, service="billing", default=default, instance=self.instance
        )
        self.endpoint = self._endpoint.url
        self._webhook_secret = options.webhook_secret or ""
        return self._key

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        found = cls(ctx.options, **cls.open_parts(ctx))
        warn_lifted(ctx)
        return found

    def _verify_webhook(self, body: bytes, headers: Mapping[str, str]) -> tuple[float, Any]:
        return provider.signed_json(
            self.scheme,
            headers,
            body,
            self._webhook_secret,
            tolerance=self.webhook_tolerance,
            now=self.clock,
            fail=lambda reason: WebhookSignatureError(self.instance, reason),
        )

    def _failed(
        self, operation: str, exc: BaseException, *, code: Any = "", found: bool = False
    ) -> NoReturn:
        """Raise the battery's error for a failed call (no provider text, no key).

        A 404 on a call that looks one subscription up (``found``) is
        :class:`SubscriptionNotFoundError`; any other error status is
        :class:`ProviderError` with the provider's code when it is an identifier; no
        answer, or one that could not be read, is :class:`ServiceUnavailableError`.
        """
        failure = provider.failure_of(exc, secrets=(self._key,))
        if failure is not None and failure.kind is provider.Kind.BLOCKED:
            raise provider.blocked_error(self._endpoint) from None
        if failure is None or failure.status is None:
            why = "no answer" if failure is not None else "no usable answer"
            raise ServiceUnavailableError(
                "billing", f"{operation} failed ({why})", instance=self.instance
            ) from None
        if failure.kind is provider.Kind.NOT_FOUND and found:
            raise SubscriptionNotFoundError(self.instance) from None
        text = str(code or "")
        error = ProviderError(
            self.instance, operation, failure.status, text if text.isidentifier() else ""
        )
        error.retry_after = failure.retry_after  # read by the resilience policy
        raise error from None
