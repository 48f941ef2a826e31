"""A view decorator for receivers: verify the signature before the view runs.

::

    from toolkit_batteries.webhook import webhook_receiver

    @csrf_exempt
    @webhook_receiver(secret=lambda request: settings.ORDERS_WEBHOOK_SECRETS)
    def orders_hook(request):
        event = request.headers["Webhook-Event"]
        data = json.loads(request.body)
        ...

A delivery that fails :func:`~toolkit_batteries.webhook.signing.verify` gets ``400``
with ``{"error": "invalid_signature"}`` and the view never runs; the reason is logged
(``toolkit.webhook``, at info), never echoed to the sender. It works on Django function
views and on DRF function views (``@api_view`` outermost): both expose the raw body.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from .signing import DEFAULT_TOLERANCE, Secrets, SignatureError, verify

__all__ = ["webhook_receiver"]

logger = logging.getLogger("toolkit.webhook")


def webhook_receiver(
    secret: Secrets | Callable[[Any], Secrets],
    *,
    tolerance: float | timedelta = DEFAULT_TOLERANCE,
    legacy: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Return a decorator that verifies deliveries with ``secret`` (or ``secret(request)``).

    ``tolerance`` is the replay window (five minutes); ``legacy`` also accepts the
    previous signature layout (see :func:`~toolkit_batteries.webhook.signing.verify`).
    On success the view runs with ``request.webhook_timestamp`` set to the signed
    timestamp (the ``Webhook-Id`` and ``Webhook-Event`` headers are signed too).
    """

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(view)
        def wrapped(request: Any, *args: Any, **kwargs: Any) -> Any:
            from django.http import JsonResponse

            keys = secret(request) if callable(secret) else secret
            try:
                stamp = verify(
                    request.headers, request.body, keys, tolerance=tolerance, legacy=legacy
                )
            except SignatureError as exc:
                logger.info("webhook receiver %s refused a delivery: %s", view.__name__, exc.reason)
                return JsonResponse({"error": "invalid_signature"}, status=400)
            request.webhook_timestamp = stamp
            return view(request, *args, **kwargs)

        return wrapped

    return decorate
