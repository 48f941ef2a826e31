"""DRF webhook views, one per provider adapter.

::

    from toolkit_batteries.payment.views import PaddlePaymentWebhookView, StripePaymentWebhookView

    urlpatterns = [
        path("webhooks/payment-a", StripePaymentWebhookView.as_view()),   # the default instance
        path("webhooks/payment-b", PaddlePaymentWebhookView.as_view(instance="eu")),
    ]

The views are named after the provider they receive from. ``PaymentAWebhookView`` and
``PaymentBWebhookView`` (the spec's neutral names) are the same classes, kept for URL
configurations written with them.

Each view is an ``APIView`` with no authentication (the signature is the credential),
hence exempt from CSRF, and no parser: the raw body must reach the signature check
untouched. It answers:

* **413** when ``Content-Length`` or the bytes actually read pass ``max_webhook_bytes``
  (at most that many bytes plus one are read, nothing is parsed);
* **403** for an instance on the ``stub`` adapter (which verifies no signature) outside
  development (``DEBUG`` or ``TOOLKIT_ENV`` dev/test/development): an unsigned POST must
  never mark a payment paid in production (deploy check ``toolkit_payment.E005``);
* **400** when the signature header is missing, stale or wrong, or the verified body is
  not the provider's JSON;
* **200** ``{"received": true, "type": ..., "applied": ...}`` otherwise, also for events
  the battery ignores, so the provider stops retrying them.

Error bodies are the toolkit's ``{"error": {"code", "message"}}``; they say which check
failed, never a header or a secret. A view bound to one adapter refuses (500) to serve
an instance configured with another, so a ``stub`` instance can never sit behind the
``payment_a`` URL by mistake.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from django.core.exceptions import ImproperlyConfigured
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from toolkit_batteries.http.errors import error_response

from .base import WebhookPayloadError, WebhookTooLargeError
from .checks import development
from .signatures import WebhookSignatureError

__all__ = [
    "PaddlePaymentWebhookView",
    "PaymentAWebhookView",
    "PaymentBWebhookView",
    "PaymentWebhookView",
    "StripePaymentWebhookView",
    "StubWebhookView",
]

logger = logging.getLogger("toolkit.payment")


class PaymentWebhookView(APIView):
    """Receive one payment instance's webhooks (any adapter; see the subclasses)."""

    authentication_classes: ClassVar[tuple] = ()
    permission_classes: ClassVar[tuple] = (AllowAny,)
    throttle_classes: ClassVar[tuple] = ()
    parser_classes: ClassVar[tuple] = ()
    #: The payment instance whose webhooks this URL receives.
    instance: str = "default"
    #: The adapter the instance must use (``None``: any).
    adapter: str | None = None
    #: A payment service object to use instead of ``services.payment(instance)``.
    service: Any = None

    def get_service(self) -> Any:
        """Return the payment service, checking it is the adapter this view expects."""
        service = self.service
        if service is None:
            from toolkit_batteries import services

            service = services.payment(self.instance)
        if self.adapter is not None and service.adapter_name != self.adapter:
            raise ImproperlyConfigured(
                f"payment.{self.instance}: this webhook view is for the {self.adapter} adapter"
            )
        return service

    def post(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        """Bound, verify and apply one webhook delivery."""
        service = self.get_service()
        if not service.verifies_webhooks and not development():
            logger.warning(
                "payment.%s: webhook refused: the stub adapter verifies no signature and "
                "accepts no webhook outside development",
                service.instance,
            )
            return error_response(
                403,
                "permission_denied",
                f"payment.{service.instance}: the stub adapter accepts no webhook outside "
                "development",
            )
        limit = int(service.max_webhook_bytes)
        raw_request = request._request
        declared = raw_request.META.get("CONTENT_LENGTH") or ""
        try:
            if declared and int(declared) > limit:
                return self._too_large(limit)
        except ValueError:
            return error_response(400, "invalid_argument", "Content-Length is not a number")
        body = raw_request.read(limit + 1)
        if len(body) > limit:
            return self._too_large(limit)
        try:
            event = service.handle_webhook(body, raw_request.headers)
        except WebhookTooLargeError:
            return self._too_large(limit)
        except WebhookSignatureError as exc:
            logger.warning("payment.%s: webhook refused: %s", service.instance, exc.reason)
            return error_response(400, "invalid_argument", f"webhook refused: {exc.reason}")
        except WebhookPayloadError as exc:
            return error_response(400, "invalid_argument", str(exc))
        return Response({"received": True, "type": event.type, "applied": event.applied})

    @staticmethod
    def _too_large(limit: int) -> Any:
        return error_response(
            413, "payload_too_large", f"webhook body over max_webhook_bytes ({limit} bytes)"
        )


class StubWebhookView(PaymentWebhookView):
    """Webhooks of a ``stub`` instance (unverified: refused outside development)."""

    adapter = "stub"


class StripePaymentWebhookView(PaymentWebhookView):
    """Webhooks of a Stripe instance (``payment_a``/``stripe``; ``Stripe-Signature``)."""

    adapter = "payment_a"


class PaddlePaymentWebhookView(PaymentWebhookView):
    """Webhooks of a Paddle instance (``payment_b``/``paddle``; ``Paddle-Signature``)."""

    adapter = "payment_b"


#: The spec's neutral names of the same views (URL configurations written with them work).
PaymentAWebhookView = StripePaymentWebhookView
PaymentBWebhookView = PaddlePaymentWebhookView
