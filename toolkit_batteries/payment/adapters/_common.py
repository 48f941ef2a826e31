"""What the two provider adapters share, on the provider base.

:func:`endpoint_of` checks ``endpoint`` against the outbound rules and logs the lifted
rules and a missing ``webhook_secret``; :func:`provider_error` turns any SDK or
transport failure into :class:`~..base.PaymentProviderError` (or, when the guard refused
the address, the ``endpoint`` configuration error) through
:func:`toolkit_batteries.core.outbound.provider.failure_of`. The provider's human text
stays in ``provider_message`` only, with the key scrubbed out.
"""

from __future__ import annotations

from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.outbound import provider

from ..base import Payment, PaymentProviderError

__all__ = ["SDKPayment", "endpoint_of", "provider_error"]


class SDKPayment(Payment):
    """A :class:`Payment` adapter over a provider SDK client that holds the key."""

    def __init__(self, client: Any, key: str = "", **kwargs: Any) -> None:
        """Keep the SDK client and the key (to scrub it); the rest goes to :class:`Payment`."""
        super().__init__(**kwargs)
        self._client = client
        self._key = key

    @classmethod
    def _required(cls, ctx: OpenContext, field: str) -> str:
        """Return the credential option ``field``; raise when it is empty."""
        return provider.required(
            getattr(ctx.options, field),
            service="payment",
            field=field,
            adapter=cls.adapter_name,
            instance=ctx.instance,
        )

    def _failed(
        self, operation: str, exc: BaseException, *, code: Any = "", message: Any = ""
    ) -> Exception:
        """Return the battery's error for ``exc`` (see :func:`provider_error`)."""
        return provider_error(
            self.instance, operation, exc, key=self._key, code=code, message=message
        )


def endpoint_of(ctx: OpenContext, default: str) -> provider.Endpoint:
    """Return the checked ``endpoint`` (``default`` when unset); warn on what is lifted."""
    ep = provider.endpoint(ctx.options, service="payment", default=default, instance=ctx.instance)
    provider.warn_relaxed(ctx.logger, ep)
    if not ctx.options.webhook_secret:
        ctx.logger.warning(
            "payment.%s: no webhook_secret: every webhook will be refused", ctx.instance
        )
    return ep


def provider_error(
    instance: str,
    operation: str,
    exc: BaseException,
    *,
    key: str,
    code: Any = "",
    message: Any = "",
) -> Exception:
    """Return the battery's error for ``exc`` raised by a provider call ``operation``."""
    failure = provider.failure_of(exc, secrets=(key,), code=code, message=message)
    if failure is not None and failure.kind is provider.Kind.BLOCKED:
        return provider.blocked_error(
            provider.Endpoint("", "payment", "endpoint", instance), provider.BLOCKED
        )
    error = PaymentProviderError(
        instance,
        operation,
        status=failure.status if failure is not None else None,
        provider_code=str(code or ""),
        provider_message=provider.scrub(message, key) if message else "",
    )
    # The resilience policy waits at least this long before another attempt.
    error.retry_after = failure.retry_after if failure is not None else None
    return error
