"""The mailer adapters, by canonical name (default first, as in the catalog).

``memory`` is Django's locmem backend (``django.core.mail.outbox``) for tests.
``provider`` hands messages to the Django e-mail backend its ``backend_path`` option names by
dotted path: a django-anymail backend, which is how a project reaches a provider's API.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "log": "toolkit_batteries.mailer.adapters.log.LogMailer",
    "smtp": "toolkit_batteries.mailer.adapters.smtp.SMTPMailer",
    "memory": "toolkit_batteries.mailer.adapters.memory.MemoryMailer",
    "provider": "toolkit_batteries.mailer.adapters.provider.ProviderMailer",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {"console": "log", "locmem": "memory"}
