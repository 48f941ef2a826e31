"""Options of the ``mailer`` service (outbound e-mail)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.options import ByteSize, Duration, option, options_class

__all__ = ["MailerOptions"]


@options_class
class MailerOptions:
    """Options of ``mailer``; adapters ``log`` (default) and ``smtp``.

    ``host`` and ``port`` are always required, so the ``log`` default keeps a dummy
    ``localhost:25``.
    """

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
