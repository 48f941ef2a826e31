"""The ``notification`` battery: short messages to a phone (``sms``) or a device (``push``).

Get the configured service from the registry (``services.notification()``) or a
container and call :meth:`~.base.Notification.send`. Adapters: ``log`` (the default:
written to the ``toolkit.notification`` logger, recipient masked), ``sms`` (a
text-message provider's Messages API through its SDK; vendor alias ``twilio``) and
``push`` (a push service's HTTP v1 API with a service-account token; vendor alias
``fcm``). No SDK is imported until an adapter opens.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base=(
        "DeliveryRefusedError InvalidNotificationError Notification NotificationError "
        "NotificationUnavailableError Outgoing Receipt check_e164"
    ),
)
