"""The mailer adapters. ``memory`` is Django's locmem backend (``django.core.mail.outbox``)
for tests. ``provider`` hands messages to the Django e-mail backend its ``backend_path``
option names by dotted path: a django-anymail backend, which is how a project reaches a
provider's API.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS = adapter_paths(
    __name__, "log.LogMailer smtp.SMTPMailer memory.MemoryMailer provider.ProviderMailer"
)

#: Django's names of the same backends (alias -> canonical).
ALIASES: dict[str, str] = {"console": "log", "locmem": "memory"}
