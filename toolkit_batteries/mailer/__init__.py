"""The ``mailer`` battery: outbound e-mail, and each adapter IS a Django e-mail backend.

Pick ``log`` (the default: messages go to the ``toolkit.mailer`` logger), ``smtp`` or
``memory`` (tests: ``django.core.mail.outbox``) in ``TOOLKIT["mailer"]`` and derive
Django's ``EMAIL_*`` settings from it in ``settings.py``::

    from toolkit_batteries.mailer import django_email_settings
    globals().update(django_email_settings(TOOLKIT))

Then ``send_mail``, ``mail_admins`` and ``services.mailer()`` build the same backend
through ``django.core.mail.get_connection``; ``services.mailer().send(to, subject, body)``
is the typed way to send one message. A django-anymail backend's dotted path in
``EMAIL_BACKEND`` (or as the adapter given to ``django_email_settings``) reaches an e-mail
provider's API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        Attachment,
        InvalidMessageError,
        MailDeliveryError,
        Mailer,
        MailerError,
        MessageTooLargeError,
    )

__all__ = [
    "Attachment",
    "InvalidMessageError",
    "MailDeliveryError",
    "Mailer",
    "MailerError",
    "MessageTooLargeError",
    "django_email_settings",
]

#: Imported on first use, so ``django.setup()`` does not import ``django.core.mail``.
_LAZY = frozenset(__all__) - {"django_email_settings"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def django_email_settings(config: Any = None) -> dict[str, Any]:
    """Return the ``EMAIL_*`` settings ``TOOLKIT["mailer"]`` implies (see :mod:`.settings`)."""
    from .settings import django_email_settings as build

    return build(config)
