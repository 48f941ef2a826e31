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

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Attachment InvalidMessageError MailDeliveryError Mailer MailerError MessageTooLargeError",
    settings="django_email_settings",
)
