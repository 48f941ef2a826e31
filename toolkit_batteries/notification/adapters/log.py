"""The ``log`` adapter (the default): each notification is written to a logger, not sent.

One ``INFO`` record per notification on the ``toolkit.notification`` logger, with the
recipient, title, body and data keys as message text and as ``extra`` fields:

* ``log.recipient``: ``masked`` (default; all but the last characters replaced by ``*``,
  enough to tell two test phones apart), ``full``, or ``none`` (left out);
* ``log.body``: ``redacted`` (default; credentials such as ``Bearer`` tokens and URL
  passwords masked, so a development one-time code stays readable), ``full``, or
  ``none`` (only the length). Data values follow the same rule; a data key that looks
  secret (``token``, ``password``...) always has its value masked.

The receipt's id is a fresh UUID and its status ``logged``. Nothing leaves the process.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.redaction import REDACTED, looks_secret, redact_string

from ..base import Notification, Outgoing, Receipt, logger

__all__ = ["LogNotification", "mask"]


def mask(recipient: str) -> str:
    """Return ``recipient`` with all but its last 2 (short) or 4 (long) characters hidden."""
    keep = 2 if len(recipient) <= 16 else 4
    if len(recipient) <= keep * 2:
        return "*" * len(recipient)
    return "*" * (len(recipient) - keep) + recipient[-keep:]


class LogNotification(Notification):
    """Writes each notification to the ``toolkit.notification`` logger instead of sending it."""

    adapter_name: ClassVar[str] = "log"

    def __init__(
        self, *, recipient: str = "masked", body: str = "redacted", instance: str = "default"
    ) -> None:
        super().__init__(instance=instance)
        self.recipient_mode = recipient or "masked"
        self.body_mode = body or "redacted"

    @classmethod
    def open(cls, ctx: OpenContext) -> LogNotification:
        options = ctx.options.log
        return cls(recipient=options.recipient, body=options.body, instance=ctx.instance)

    def _send(self, message: Outgoing) -> Receipt:
        receipt = Receipt(str(uuid.uuid4()), "log", "logged")
        if not logger.isEnabledFor(logging.INFO):
            return receipt
        fields: dict[str, Any] = {
            "service": "notification",
            "instance": self.instance,
            "notification_id": receipt.id,
            "body_length": len(message.body),
        }
        text = f"notification.{self.instance}: {receipt.id}"
        if self.recipient_mode != "none":
            to = message.to if self.recipient_mode == "full" else mask(message.to)
            fields["to"] = to
            text += f" to {to}"
        full = self.body_mode == "full"
        if self.body_mode != "none":
            shown = message.body if full else redact_string(message.body)
            title = message.title if full else redact_string(message.title)
            fields["title"], fields["body"] = title, shown
            fields["data"] = {
                key: REDACTED if looks_secret(key) else (value if full else redact_string(value))
                for key, value in message.data.items()
            }
            if title:
                text += f" title {title!r}"
            text += f"\n{shown}"
        else:
            fields["data"] = sorted(message.data)
            text += f" ({len(message.body)} characters)"
        logger.info("%s", text, extra=fields)
        return receipt
