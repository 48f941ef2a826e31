"""The ``log`` mailer (the default): each message is written to the ``toolkit.mailer`` logger.

Nothing is delivered. One ``INFO`` record per message carries the envelope (from,
recipients), the subject, the size and the ``Message-ID`` as message text and as
``extra`` fields; the body follows ``log_body``:

* ``redacted`` (default): the plain-text body with credentials masked (URL passwords,
  ``Bearer``/``Basic`` tokens, ``password=...``), so a development verification link
  stays readable while a pasted secret does not;
* ``full``: the body as written;
* ``none``: the body is left out (only its size is logged).

Headers whose name looks secret (``Authorization``, ``X-Api-Key``...) are always masked;
attachments are listed by name and size, never by content.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from toolkit_batteries.core.redaction import REDACTED, looks_secret, redact_string

from ..base import Mailer, Prepared, logger

__all__ = ["LogMailer"]

#: Headers Django sets itself: not repeated in the record.
_PLAIN_HEADERS = frozenset({"message-id", "date"})


class LogMailer(Mailer):
    """Writes each message to the ``toolkit.mailer`` logger instead of sending it."""

    adapter_name: ClassVar[str] = "log"

    def _deliver(self, prepared: list[Prepared]) -> int:
        """Log each message (body per ``log_body``); return how many were logged."""
        if not logger.isEnabledFor(logging.INFO):
            return len(prepared)
        mode = self.options.log_body
        for item in prepared:
            message = item.message
            fields: dict[str, Any] = {
                "service": "mailer",
                "instance": self.instance,
                "mail_from": item.from_email,
                "mail_to": list(item.recipients),
                "subject": redact_string(str(message.subject)),
                "size": len(item.data),
                "message_id": str(message.extra_headers.get("Message-ID", "")),
                "headers": {
                    name: REDACTED if looks_secret(name) else redact_string(str(value))
                    for name, value in message.extra_headers.items()
                    if name.lower() not in _PLAIN_HEADERS
                },
                "attachments": [_describe(a) for a in message.attachments],
            }
            text = (
                f"mail.{self.instance}: from {item.from_email} to {', '.join(item.recipients)}"
                f" subject {fields['subject']!r} ({len(item.data)} bytes)"
            )
            if mode != "none":
                body = str(message.body)
                fields["body"] = body if mode == "full" else redact_string(body)
                text = f"{text}\n{fields['body']}"
            logger.info("%s", text, extra=fields)
        return len(prepared)


def _describe(attachment: Any) -> dict[str, Any]:
    """Return the name, type and size of one attachment (never its content)."""
    filename = getattr(attachment, "filename", None)
    content = getattr(attachment, "content", None)
    mimetype = getattr(attachment, "mimetype", None)
    if filename is None and isinstance(attachment, tuple):
        filename, content, mimetype = [*attachment, None, None, None][:3]
    if filename is None:  # a MIMEBase part
        filename = attachment.get_filename() if hasattr(attachment, "get_filename") else None
        content = attachment.get_payload() if hasattr(attachment, "get_payload") else ""
        mimetype = (
            attachment.get_content_type() if hasattr(attachment, "get_content_type") else None
        )
    return {"filename": filename, "mimetype": mimetype, "size": len(content or "")}
