"""Options of the ``mailer`` service (outbound e-mail)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.option_kinds import non_negative, opens, relation
from toolkit_batteries.core.options import ByteSize, Duration, option, options_class

__all__ = ["MailerOptions"]


@options_class
class MailerOptions:
    """Options of ``mailer``; adapters ``log`` (default), ``smtp``, ``memory``, ``provider``.

    ``host`` and ``port`` are always required, so the ``log`` default keeps a dummy
    ``localhost:25``. Beyond the spec's table: ``log_body`` says how much of a message
    body the ``log`` adapter writes to the ``toolkit.mailer`` logger, and ``backend_path`` is
    the Django e-mail backend (a django-anymail one) the ``provider`` adapter hands to.
    """

    __checks__ = (
        non_negative("toolkit_mailer.E003", each=False).on("timeout", "max_message_size"),
        relation(
            "toolkit_mailer.E002",
            lambda o: (
                None
                if bool(o.username) == bool(o.password)
                else f'option "{"password" if o.username else "username"}" is empty while '
                f'"{"username" if o.username else "password"}" is set'
            ),
            adapters=("smtp",),
            hint="set both username and password for SMTP AUTH, or neither",
        ),
        relation(
            "toolkit_mailer.W001",
            lambda o: (
                'the SMTP password is sent unencrypted (option "encryption")'
                if o.password and o.encryption == "none"
                else None
            ),
            adapters=("smtp",),
            warning=True,
            hint='use "starttls" (default) or "tls"',
        ),
        opens(
            "toolkit_mailer.E004",
            "toolkit_batteries.mailer.adapters.provider:provider_backend",
            adapters=("provider",),
            hint='set "backend_path" to a dotted path such as '
            '"anymail.backends.postmark.EmailBackend"',
        ).on("backend_path"),
    )

    host: str = option("localhost", doc="SMTP hostname")
    port: int = option(25, min=1, max=65535, doc="SMTP port, 1-65535")
    username: str = option("", doc="SMTP user")
    password: str = option("", secret=True, doc="SMTP password")
    encryption: str = option(
        "starttls", choices=("starttls", "tls", "none"), doc="transport encryption mode"
    )
    timeout: Duration = option(timedelta(seconds=30), doc="operation timeout")
    max_message_size: ByteSize = option(
        ByteSize(10 * 1024 * 1024), doc="maximum message size in bytes"
    )
    log_body: str = option(
        "redacted",
        choices=("redacted", "full", "none"),
        doc="log adapter: body credentials masked (redacted), verbatim (full) or omitted (none)",
    )
    backend_path: str = option(
        "", doc="provider adapter: dotted path of the Django e-mail backend that delivers"
    )
