"""The ``smtp`` mailer: Django's SMTP backend with the battery's options and size limit.

``encryption`` maps onto Django's switches: ``starttls`` (default) is ``EMAIL_USE_TLS``
(plain connect, then ``STARTTLS``), ``tls`` is ``EMAIL_USE_SSL`` (TLS from the first
byte, usually port 465), ``none`` is neither. Certificates are verified against the
system's trust store (``ssl.create_default_context()``; ``SSL_CERT_FILE`` adds a private
CA). ``AUTH`` runs when both ``username`` and ``password`` are set. ``timeout`` bounds
the connect and every command.

Every message is serialised and checked against ``max_message_size`` before the
connection is opened, and each is sent with the bytes that were checked. Failures raise
:class:`~toolkit_batteries.mailer.MailDeliveryError` (an ``smtplib.SMTPException``) naming
the failure's kind and SMTP code, never the password; ``fail_silently`` swallows them as
Django does.
"""

from __future__ import annotations

import smtplib
from typing import Any, ClassVar

from django.core.mail.backends.smtp import EmailBackend as SMTPBackend

from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.core.tracing import traced

from ..base import MailDeliveryError, Mailer, Prepared

__all__ = ["SMTPMailer"]


def _reason(exc: BaseException) -> str:
    """Describe a failure by kind and SMTP code only (server text may echo addresses)."""
    code = getattr(exc, "smtp_code", None)
    return f"{type(exc).__name__}" + (f" (SMTP {code})" if code else "")


@traced("_deliver")
class SMTPMailer(Mailer, SMTPBackend):
    """Sends through an SMTP server with Django's backend; the size is checked first."""

    adapter_name: ClassVar[str] = "smtp"

    def __init__(
        self,
        fail_silently: bool = False,
        *,
        ssl_keyfile: str | None = None,
        ssl_certfile: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Decode the options, then hand them to Django's SMTP backend."""
        Mailer.__init__(self, fail_silently, **kwargs)
        options = self.options
        SMTPBackend.__init__(
            self,
            host=options.host,
            port=int(options.port),
            username=options.username,
            password=options.password,
            use_tls=options.encryption == "starttls",
            use_ssl=options.encryption == "tls",
            fail_silently=fail_silently,
            timeout=options.timeout.total_seconds() or None,
            ssl_keyfile=ssl_keyfile,
            ssl_certfile=ssl_certfile,
        )

    def _deliver(self, prepared: list[Prepared]) -> int:
        """Open (if needed), send each prepared message's checked bytes, close what we opened."""
        with self._lock:
            try:
                created = self.open()
            except OSError as exc:  # smtplib.SMTPException is an OSError
                raise MailDeliveryError(self.instance, _reason(exc)) from exc
            if not self.connection or created is None:
                return 0
            sent = 0
            try:
                for item in prepared:
                    try:
                        self.connection.sendmail(item.from_email, item.recipients, item.data)
                    except smtplib.SMTPException as exc:
                        if not self.fail_silently:
                            raise MailDeliveryError(self.instance, _reason(exc)) from exc
                    else:
                        sent += 1
            finally:
                if created:
                    self.close()
        return sent

    def ping(self) -> None:
        """Connect (with ``STARTTLS`` and ``AUTH`` as configured) and quit; raise if that fails."""
        probe = type(self)(instance=self.instance, options=self.options)
        try:
            probe.open()
        except OSError as exc:
            raise ServiceUnavailableError("mailer", _reason(exc), instance=self.instance) from None
        finally:
            probe.close()
