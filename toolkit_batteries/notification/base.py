"""The notification service: send a short message to a phone or a device.

::

    notification = services.notification()
    receipt = notification.send("+14155550100", "Your code is 123456")
    receipt.id, receipt.status        # the provider's message id and first status

One operation, :meth:`Notification.send`, the same on every adapter: the base checks the
arguments (the recipient by the adapter's rules, the body, title and data against the
strictest provider's limits, so a message the ``log`` adapter accepts in development is
one the providers accept in production) and hands a :class:`Outgoing` to the adapter's
one primitive, :meth:`Notification._send`.

Errors name the service, the instance and the argument or option, never a phone number,
a device token, a body or a credential.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import (
    InvalidArgumentError,
    InvalidOptionsError,
    ServiceUnavailableError,
    ToolkitError,
)

__all__ = [
    "E164",
    "MAX_BODY_CHARS",
    "MAX_DATA_BYTES",
    "MAX_TITLE_CHARS",
    "DeliveryRefusedError",
    "InvalidNotificationError",
    "Notification",
    "NotificationError",
    "NotificationUnavailableError",
    "Outgoing",
    "Receipt",
    "check_e164",
    "logger",
]

logger = logging.getLogger("toolkit.notification")

#: A phone number in E.164: ``+``, a country code not starting with 0, at most 15 digits.
E164: Final = re.compile(r"\+[1-9][0-9]{1,14}")
#: Longest body: the text-message provider's limit (it splits into up to 10 segments).
MAX_BODY_CHARS: Final = 1600
#: Longest title (a push notification's heading; text messages prefix it to the body).
MAX_TITLE_CHARS: Final = 200
#: Largest ``data`` payload, UTF-8 keys plus values: the push service's 4 KB message limit.
MAX_DATA_BYTES: Final = 4000
#: ``data`` keys the push service reserves (and prefixes it refuses).
_RESERVED_KEYS: Final = frozenset({"from", "notification", "message_type", "collapse_key"})
_RESERVED_PREFIXES: Final = ("google", "gcm")
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class NotificationError(ToolkitError):
    """Base of the notification errors; messages never hold a recipient, body or secret."""

    code = "notification_error"


class InvalidNotificationError(InvalidArgumentError, NotificationError):
    """An argument of :meth:`Notification.send` is invalid; nothing was sent."""

    template = "notification.{instance}: {argument} {reason}; nothing was sent"


class DeliveryRefusedError(NotificationError):
    """The provider answered that it will not take this message (a 4xx other than 429).

    Retrying the same message will not help: fix the recipient, the payload or the
    credentials. ``status`` is the HTTP status, ``provider_code`` the provider's own error
    code (a number for text messages, a name such as ``UNREGISTERED`` for push).
    """

    code = "failed_precondition"

    def __init__(
        self, instance: str, adapter: str, status: int, provider_code: str, reason: str = ""
    ) -> None:
        self.instance, self.adapter = instance, adapter
        self.status, self.provider_code = status, provider_code
        detail = f"HTTP {status}" + (f", code {provider_code}" if provider_code else "")
        extra = f": {reason}" if reason else ""
        super().__init__(
            f"notification.{instance}: the {adapter} provider refused the message "
            f"({detail}){extra}; nothing was sent"
        )


class NotificationUnavailableError(NotificationError, ServiceUnavailableError):
    """The provider could not be reached or answered 429/5xx; the message may be retried."""

    code = "service_unavailable"

    def __init__(self, instance: str, reason: str) -> None:
        ServiceUnavailableError.__init__(self, "notification", reason, instance=instance)


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One checked notification, as the base hands it to an adapter."""

    to: str
    body: str
    title: str = ""
    data: Mapping[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:  # never the recipient or the text
        return f"<Outgoing body={len(self.body)} chars, data={len(self.data)} keys>"


@dataclass(frozen=True, slots=True)
class Receipt:
    """What :meth:`Notification.send` returns: the provider's message id and status."""

    #: The provider's id (a text message's SID, a push message's resource name, a UUID).
    id: str
    #: The adapter that sent it (``log``, ``sms``, ``push``).
    adapter: str
    #: The provider's first status (``queued``, ``accepted``, ``logged``).
    status: str


def check_e164(value: Any, *, instance: str, argument: str, option: bool = False) -> str:
    """Return ``value`` if it is an E.164 phone number, else raise naming ``argument``.

    ``option=True`` raises :class:`InvalidOptionsError` (a configured sender), else
    :class:`InvalidNotificationError`. The number is never echoed.
    """
    if isinstance(value, str) and E164.fullmatch(value):
        return value
    reason = "is not an E.164 phone number (a + then 2 to 15 digits, no blanks)"
    if option:
        raise InvalidOptionsError("notification", argument, reason, instance=instance)
    raise InvalidNotificationError(instance, argument, reason)


class Notification(Service):
    """Notifications: :meth:`send` a body (and a title and data) to one recipient."""

    service_name: ClassVar[str] = "notification"

    def __init__(self, *, instance: str = "default") -> None:
        self.instance = instance

    def send(
        self,
        to: str,
        body: str,
        *,
        title: str = "",
        data: Mapping[str, str] | None = None,
    ) -> Receipt:
        """Send ``body`` to ``to``; return the provider's :class:`Receipt`.

        ``to`` is what the adapter addresses (an E.164 number for ``sms``; a device
        registration token or ``topic:<name>`` for ``push``). ``title`` heads a push
        notification and prefixes a text message; ``data`` (string keys and values) rides
        along with a push message. Raises :class:`InvalidNotificationError` before
        anything leaves the process, :class:`DeliveryRefusedError` when the provider
        refuses, :class:`NotificationUnavailableError` when it cannot be reached.
        """
        instance = self.instance
        to = self._check_recipient(to)
        if not isinstance(body, str) or not body.strip():
            raise InvalidNotificationError(instance, "body", "must be a non-empty string")
        if len(body) > MAX_BODY_CHARS:
            raise InvalidNotificationError(
                instance, "body", f"is longer than {MAX_BODY_CHARS} characters"
            )
        if "\x00" in body:
            raise InvalidNotificationError(instance, "body", "contains a NUL character")
        if not isinstance(title, str) or len(title) > MAX_TITLE_CHARS or _has_control(title):
            raise InvalidNotificationError(
                instance,
                "title",
                f"must be one line of at most {MAX_TITLE_CHARS} characters",
            )
        return self._send(Outgoing(to, body, title, _check_data(data, instance)))

    def _check_recipient(self, to: Any) -> str:
        """Return ``to`` if this adapter can address it; the base checks only its shape."""
        if not isinstance(to, str) or not to or len(to) > 4096:
            raise InvalidNotificationError(
                self.instance, "to", "must be a non-empty string of at most 4096 characters"
            )
        if _has_control(to) or any(ch.isspace() for ch in to):
            raise InvalidNotificationError(
                self.instance, "to", "contains a blank or a control character"
            )
        return to

    def _send(self, message: Outgoing) -> Receipt:
        """Deliver one checked message (the adapter's primitive)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} notification.{self.instance}>"


def _has_control(text: str) -> bool:
    return "\n" in text or "\r" in text or bool(_CONTROL.search(text))


def _check_data(data: Any, instance: str) -> dict[str, str]:
    """Return ``data`` as a plain dict if every key and value is a string within limits."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise InvalidNotificationError(instance, "data", "must be a mapping of strings")
    size = 0
    checked: dict[str, str] = {}
    for key, value in data.items():
        if not isinstance(key, str) or not key or not isinstance(value, str):
            raise InvalidNotificationError(
                instance, "data", "must map non-empty string keys to string values"
            )
        folded = key.lower()
        if folded in _RESERVED_KEYS or folded.startswith(_RESERVED_PREFIXES):
            raise InvalidNotificationError(
                instance, "data", "uses a key the push service reserves (from, google.*, gcm.*)"
            )
        size += len(key.encode()) + len(value.encode())
        checked[key] = value
    if size > MAX_DATA_BYTES:
        raise InvalidNotificationError(
            instance, "data", f"is larger than {MAX_DATA_BYTES} bytes of keys and values"
        )
    return checked
