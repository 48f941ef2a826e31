"""The ``notification`` battery: short messages to a phone (``sms``) or a device (``push``).

Get the configured service from the registry (``services.notification()``) or a
container and call :meth:`~.base.Notification.send`. Adapters: ``log`` (the default:
written to the ``toolkit.notification`` logger, recipient masked), ``sms`` (a
text-message provider's Messages API through its SDK; vendor alias ``twilio``) and
``push`` (a push service's HTTP v1 API with a service-account token; vendor alias
``fcm``). No SDK is imported until an adapter opens.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        DeliveryRefusedError,
        InvalidNotificationError,
        Notification,
        NotificationError,
        NotificationUnavailableError,
        Outgoing,
        Receipt,
        check_e164,
    )

__all__ = [
    "DeliveryRefusedError",
    "InvalidNotificationError",
    "Notification",
    "NotificationError",
    "NotificationUnavailableError",
    "Outgoing",
    "Receipt",
    "check_e164",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "DeliveryRefusedError": "base",
    "InvalidNotificationError": "base",
    "Notification": "base",
    "NotificationError": "base",
    "NotificationUnavailableError": "base",
    "Outgoing": "base",
    "Receipt": "base",
    "check_e164": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
