"""The mailer service: each adapter IS a Django e-mail backend, built by ``get_connection``.

Every adapter subclasses :class:`django.core.mail.backends.base.BaseEmailBackend` with
Django's constructor (``fail_silently`` plus keyword arguments), so ``EMAIL_BACKEND`` can
name it and :func:`django.core.mail.get_connection` builds it: ``send_mail``,
``mail_admins``, ``EmailMessage.send()`` and ``services.mailer()`` all reach the same
class with the same options. ``settings.py`` derives the ``EMAIL_*`` settings from
``TOOLKIT["mailer"]`` (:func:`~toolkit_batteries.mailer.django_email_settings`).

Where the options come from, per option, first match wins:

1. a keyword argument of the constructor: the battery's names (``host``, ``port``,
   ``username``, ``password``, ``encryption``, ``timeout``, ``max_message_size``,
   ``log_body``) or Django's (``use_tls``, ``use_ssl``, and ``send_mail``'s
   ``auth_user``/``auth_password`` which arrive as ``username``/``password``), or a whole
   decoded ``options=`` object (what the container passes);
2. Django's settings: ``EMAIL_HOST``, ``EMAIL_PORT``, ``EMAIL_HOST_USER``,
   ``EMAIL_HOST_PASSWORD``, ``EMAIL_USE_TLS``/``EMAIL_USE_SSL`` (-> ``encryption``),
   ``EMAIL_TIMEOUT``, and the toolkit's ``EMAIL_MAX_MESSAGE_SIZE`` and ``EMAIL_LOG_BODY``;
3. the option's default (``encryption`` is then ``none``, as in Django, when neither
   ``EMAIL_USE_TLS`` nor ``EMAIL_USE_SSL`` is set; ``django_email_settings`` sets them).

Values are decoded as strictly as ``TOOLKIT``: an unknown keyword fails with a "did you
mean", a bad value names the field, never the value.

What the base adds to ``BaseEmailBackend``:

* :meth:`Mailer.send`, a typed way to send one message that returns its ``Message-ID``;
* ``max_message_size``, enforced on the serialised message **before** any connection
  is made (:class:`MessageTooLargeError`; with ``fail_silently`` the message is dropped
  and a warning naming its size is logged);
* one ``send_messages`` for every adapter: it serialises and checks every message, then
  hands the prepared messages to the adapter's :meth:`Mailer._deliver`.
"""

from __future__ import annotations

import functools
import logging
import smtplib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from email.utils import make_msgid
from typing import TYPE_CHECKING, Any, ClassVar

from django.core.mail.backends.base import BaseEmailBackend

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidArgumentError, ToolkitError
from toolkit_batteries.core.options import Where, build_options, decode_mapping

if TYPE_CHECKING:
    from django.core.mail import EmailMessage

    from toolkit_batteries.core.adapter import OpenContext
    from toolkit_batteries.core.slots import Held

    from .options import MailerOptions

__all__ = [
    "Attachment",
    "InvalidMessageError",
    "MailDeliveryError",
    "Mailer",
    "MailerError",
    "MessageTooLargeError",
    "Prepared",
]

#: The logger every adapter writes to (the ``log`` adapter's messages, dropped messages).
logger = logging.getLogger("toolkit.mailer")

#: Option -> the Django setting it is read from when no keyword argument gives it.
SETTING_OF: dict[str, str] = {
    "host": "EMAIL_HOST",
    "port": "EMAIL_PORT",
    "username": "EMAIL_HOST_USER",
    "password": "EMAIL_HOST_PASSWORD",
    "timeout": "EMAIL_TIMEOUT",
    "max_message_size": "EMAIL_MAX_MESSAGE_SIZE",
    "log_body": "EMAIL_LOG_BODY",
}
#: The source named by errors about options read from settings or keyword arguments.
SOURCE = "settings.EMAIL_*"


class MailerError(ToolkitError):
    """Base of the mailer's errors; messages name the instance, never an address or body."""

    code = "mailer_error"


class MessageTooLargeError(MailerError, ValueError):
    """A message is larger than ``max_message_size``; nothing was sent or connected."""

    code = "message_too_large"
    template = (
        "mailer.{instance}: message of {size} bytes exceeds max_message_size "
        "({limit} bytes); nothing was sent"
    )


class InvalidMessageError(InvalidArgumentError, MailerError):
    """The arguments of :meth:`Mailer.send` cannot make a message (no recipient, a newline)."""


class MailDeliveryError(MailerError, smtplib.SMTPException):
    """The mail server refused or could not be reached; also an ``SMTPException``.

    The message names the instance and the failure's kind and SMTP code, never the
    password (``except smtplib.SMTPException`` keeps working around Django's callers).
    """

    code = "service_unavailable"
    template = "mailer.{instance}: delivery failed: {reason}"


@dataclass(frozen=True, slots=True)
class Attachment:
    """One attachment of :meth:`Mailer.send`: a file name, its content and MIME type."""

    filename: str
    content: bytes | str
    mimetype: str = "application/octet-stream"


@dataclass(slots=True)
class Prepared:
    """A message serialised once, before connecting: what the adapters deliver."""

    message: EmailMessage
    from_email: str
    recipients: list[str]
    data: bytes


def decode_options(
    instance: str, kwargs: Mapping[str, Any], base: MailerOptions | None = None
) -> MailerOptions:
    """Decode the mailer's options from keyword arguments over ``base`` or ``EMAIL_*``."""
    from django.conf import settings

    from toolkit_batteries.core.options import options_to_dict

    from .options import MailerOptions

    given = {key: value for key, value in kwargs.items() if value is not None}
    raw: dict[str, Any] = {}
    if base is not None:
        raw = options_to_dict(base, redact_secrets=False)
        use_ssl, use_tls = base.encryption == "tls", base.encryption == "starttls"
    else:
        for name, setting in SETTING_OF.items():
            value = getattr(settings, setting, None)
            if value is not None:
                raw[name] = value
        use_ssl = bool(getattr(settings, "EMAIL_USE_SSL", False))
        use_tls = bool(getattr(settings, "EMAIL_USE_TLS", False))
    if "use_ssl" in given or "use_tls" in given:
        use_ssl = bool(given.pop("use_ssl", False))
        use_tls = bool(given.pop("use_tls", False))
    if use_ssl and use_tls:
        raise Where("mailer", instance, SOURCE).invalid(
            "encryption", "cannot be both EMAIL_USE_TLS and EMAIL_USE_SSL"
        )
    raw["encryption"] = "tls" if use_ssl else "starttls" if use_tls else "none"
    raw.update(given)
    where = Where("mailer", instance, SOURCE)
    return build_options(MailerOptions, decode_mapping(MailerOptions, raw, where), where)


def _seconds(value: timedelta | float | None) -> float | None:
    if value is None:
        return None
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


class _Open:
    """One name, two methods: ``cls.open(ctx)`` for the container, ``self.open()`` for Django.

    ``Service.open`` is the container's class method and ``BaseEmailBackend.open`` is
    Django's instance method (``with connection:``, the SMTP backend's ``send_messages``).
    On the class this returns the container's open; on a backend it returns the next
    ``open`` after ``Service`` in the method order, which is Django's.
    """

    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return functools.partial(_open_held, owner)
        return obj._connect


def _open_held(cls: type[Mailer], ctx: OpenContext) -> Held[Mailer]:
    """Return a getter that builds the instance's backend through ``get_connection``."""
    from .settings import open_held

    return open_held(cls, ctx)


class Mailer(Service, BaseEmailBackend):
    """Base of the mailer adapters: a Django e-mail backend plus a typed :meth:`send`."""

    service_name: ClassVar[str] = "mailer"

    def __init__(
        self,
        fail_silently: bool = False,
        *,
        instance: str = "default",
        options: MailerOptions | None = None,
        **kwargs: Any,
    ) -> None:
        """Build the backend from ``options``, or from ``kwargs`` over ``EMAIL_*`` settings."""
        BaseEmailBackend.__init__(self, fail_silently=fail_silently)
        #: The TOOLKIT instance this backend was derived from (``default`` for settings).
        self.instance = str(instance or "").strip() or "default"
        if options is None or kwargs:
            options = decode_options(self.instance, kwargs, options)
        #: The decoded options (``repr`` leaves the password out).
        self.options = options
        self.max_message_size = int(options.max_message_size or 0)

    #: ``Mailer.open(ctx)`` is the container's open; ``backend.open()`` is Django's.
    open: Any = _Open()

    def _connect(self) -> bool | None:
        """Django's ``open()``: the next ``open`` after ``Service`` in the method order."""
        return super(Service, self).open()  # type: ignore[no-any-return]

    def close(self) -> None:
        """Close what Django's backend opened (the SMTP connection); ``Service`` has nothing."""
        super(Service, self).close()

    # ------------------------------------------------------------------ sending

    def send(
        self,
        to: str | Sequence[str],
        subject: str,
        body: str,
        *,
        html: str | None = None,
        from_email: str | None = None,
        cc: Sequence[str] = (),
        bcc: Sequence[str] = (),
        reply_to: Sequence[str] = (),
        headers: Mapping[str, str] | None = None,
        attachments: Iterable[Attachment] = (),
    ) -> str:
        """Send one message and return its ``Message-ID``.

        ``to`` is one address or several; ``html`` adds a ``text/html`` alternative to the
        plain ``body``; ``from_email`` defaults to ``DEFAULT_FROM_EMAIL``. Raises
        :class:`InvalidMessageError` for no recipient or a line break in the subject or a
        header, :class:`MessageTooLargeError` before connecting when the message exceeds
        ``max_message_size``, and :class:`MailDeliveryError` when the server refuses it.
        """
        from django.core.mail import EmailMultiAlternatives

        recipients = [to] if isinstance(to, str) else list(to)
        if not any(recipients) and not any(cc) and not any(bcc):
            raise InvalidMessageError(f"mailer.{self.instance}: a message needs a recipient")
        extra = dict(headers or {})
        for name, value in [("subject", subject), *extra.items()]:
            if "\n" in str(value) or "\r" in str(value) or "\n" in name or "\r" in name:
                raise InvalidMessageError(
                    f'mailer.{self.instance}: "{name}" must not contain a line break'
                )
        message_id = extra.get("Message-ID") or make_msgid(domain=_msgid_domain())
        extra["Message-ID"] = message_id
        message = EmailMultiAlternatives(
            subject=subject,
            body=body,
            from_email=from_email,
            to=recipients,
            cc=list(cc),
            bcc=list(bcc),
            reply_to=list(reply_to),
            headers=extra,
            connection=self,
        )
        if html is not None:
            message.attach_alternative(html, "text/html")
        for item in attachments:
            message.attach(item.filename, item.content, item.mimetype)
        if not self.send_messages([message]):
            raise MailDeliveryError(self.instance, "the message was not sent")
        return message_id

    def send_messages(self, email_messages: Sequence[EmailMessage]) -> int:
        """Check every message's size (no connection yet), then deliver; return the count."""
        if not email_messages:
            return 0
        prepared = self._prepare(email_messages)
        if not prepared:
            return 0
        return self._deliver(prepared)

    def _prepare(self, email_messages: Sequence[EmailMessage]) -> list[Prepared]:
        """Serialise each message once and refuse those over ``max_message_size``."""
        from django.conf import settings
        from django.core.mail.message import sanitize_address

        limit = self.max_message_size
        prepared: list[Prepared] = []
        for message in email_messages:
            if not message.recipients():
                continue
            data = message.message().as_bytes(linesep="\r\n")
            if limit and len(data) > limit:
                error = MessageTooLargeError(self.instance, len(data), limit)
                if not self.fail_silently:
                    raise error
                logger.warning("%s", error, extra={"service": "mailer", "instance": self.instance})
                continue
            encoding = message.encoding or settings.DEFAULT_CHARSET
            prepared.append(
                Prepared(
                    message,
                    sanitize_address(message.from_email, encoding),
                    [sanitize_address(address, encoding) for address in message.recipients()],
                    data,
                )
            )
        return prepared

    def _deliver(self, prepared: list[Prepared]) -> int:
        """Deliver checked messages; adapters override. Return how many were sent."""
        raise NotImplementedError

    def ping(self) -> None:
        """Check the adapter can deliver (the ``smtp`` adapter connects); others do nothing."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} mailer.{self.instance}>"


def _msgid_domain() -> str:
    from django.core.mail.utils import DNS_NAME

    return str(DNS_NAME)
