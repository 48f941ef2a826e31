"""DRF webhook views, one per provider, that apply events to the state machine.

::

    from toolkit_batteries.billing.views import PaddleBillingWebhookView, StripeBillingWebhookView

    urlpatterns = [
        path("hooks/stripe", StripeBillingWebhookView.as_view()),              # billing "default"
        path("hooks/paddle", PaddleBillingWebhookView.as_view(instance="paddle")),
    ]

The views are named after the provider they receive from. ``BillingAWebhookView`` and
``BillingBWebhookView`` (the spec's neutral names) are the same classes, kept for URL
configurations written with them.

Each view is a CSRF-exempt ``APIView`` with no authentication (the provider's signature
is the authentication). It answers:

* ``413 payload_too_large`` when ``Content-Length`` (or the bytes actually sent) exceed
  the instance's ``max_webhook_bytes``: the body is never parsed, and at most one byte
  more than the limit is read;
* ``400 invalid_argument`` when the signature is missing or wrong, or its timestamp is
  outside ``webhook_tolerance`` (the reason is logged at info, never echoed);
* ``404 not_found`` when the instance is not configured with the view's adapter (a hook
  posted to the wrong URL is not processed by another provider's rules);
* ``200`` with ``{"received": true, "outcome": ...}`` otherwise: ``applied``,
  ``duplicate`` (the event id was applied before), ``stale`` (older than the last event
  applied), ``ignored`` (not a subscription event) or ``illegal`` (refused by the state
  machine, logged; answering 200 stops the provider from retrying an event that can
  never apply).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, ClassVar

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .base import WebhookSignatureError, WebhookTooLargeError

__all__ = [
    "BillingAWebhookView",
    "BillingBWebhookView",
    "BillingWebhookView",
    "PaddleBillingWebhookView",
    "StripeBillingWebhookView",
]

logger = logging.getLogger("toolkit.billing")


def _error(status: int, code: str, message: str) -> Response:
    return Response({"error": {"code": code, "message": message}}, status=status)


class BillingWebhookView(APIView):
    """Receive one provider's webhooks for one billing instance."""

    authentication_classes: ClassVar[list[Any]] = []
    permission_classes: ClassVar[list[Any]] = []
    #: The adapter whose webhooks this view accepts (set by the subclasses).
    adapter: ClassVar[str] = ""
    #: The billing instance (``as_view(instance="...")``).
    instance: str = "default"
    #: Returns the billing service; default ``services.billing(instance)``.
    get_billing: Callable[[], Any] | None = None

    def _billing(self) -> Any:
        if self.get_billing is not None:
            return self.get_billing()
        from toolkit_batteries import services

        return services.billing(self.instance)

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        billing = self._billing()
        if billing.adapter_name != self.adapter:
            logger.error(
                "billing.%s: a %s webhook view received a delivery but the instance uses %s",
                self.instance,
                self.adapter,
                billing.adapter_name,
            )
            return _error(404, "not_found", "no such webhook")
        limit = billing.max_webhook_bytes
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return _error(400, "invalid_argument", "bad Content-Length")
        if declared > limit:
            return _error(413, "payload_too_large", "webhook body too large")
        body = request._request.read(limit + 1)
        try:
            applied = billing.handle_webhook(body, request.headers)
        except WebhookTooLargeError:
            return _error(413, "payload_too_large", "webhook body too large")
        except WebhookSignatureError as exc:
            logger.info("billing.%s: webhook refused: %s", self.instance, exc.reason)
            return _error(400, "invalid_argument", "invalid signature")
        return Response({"received": True, "outcome": applied.outcome})


class StripeBillingWebhookView(BillingWebhookView):
    """Webhooks of a Stripe instance (``billing_a``/``stripe``; ``Stripe-Signature``)."""

    adapter: ClassVar[str] = "billing_a"


class PaddleBillingWebhookView(BillingWebhookView):
    """Webhooks of a Paddle instance (``billing_b``/``paddle``; ``Paddle-Signature``)."""

    adapter: ClassVar[str] = "billing_b"


#: The spec's neutral names of the same views (URL configurations written with them work).
BillingAWebhookView = StripeBillingWebhookView
BillingBWebhookView = PaddleBillingWebhookView
