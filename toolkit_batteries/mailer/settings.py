"""Derive the ``EMAIL_*`` settings from ``TOOLKIT["mailer"]``, and open a mailer instance.

In ``settings.py``::

    from toolkit_batteries.mailer import django_email_settings
    globals().update(django_email_settings(TOOLKIT))

sets ``EMAIL_BACKEND`` to the default instance's adapter class and ``EMAIL_HOST``,
``EMAIL_PORT``, ``EMAIL_HOST_USER``, ``EMAIL_HOST_PASSWORD``, ``EMAIL_USE_TLS``,
``EMAIL_USE_SSL``, ``EMAIL_TIMEOUT``, ``EMAIL_MAX_MESSAGE_SIZE`` and ``EMAIL_LOG_BODY``
from its options, so ``send_mail``, ``mail_admins`` and ``EmailMessage.send()`` build the
same backend ``services.mailer()`` returns.

The container's ``open`` builds the instance's backend through
``django.core.mail.get_connection(<adapter class>, instance=..., options=...)`` on every
accessor call (Django's model: a backend per use, its connection opened by ``send`` or
``with``), with the options decoded once from ``TOOLKIT``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import UnknownAdapterError

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext
    from toolkit_batteries.core.slots import Held

    from .base import Mailer

__all__ = ["backend_path", "django_email_settings", "open_held"]


def backend_path(adapter: str) -> str:
    """Return the ``EMAIL_BACKEND`` dotted path of a mailer adapter name.

    A canonical name or alias gives the adapter's class; any other dotted path (a
    django-anymail backend, Django's own) is returned as written once it imports as a
    Django e-mail backend.
    """
    from django.core.mail.backends.base import BaseEmailBackend

    from toolkit_batteries.core.loading import adapter_table, import_dotted, table_entry

    entry = table_entry("mailer", adapter)
    if entry is not None:
        return entry[1]
    table = adapter_table("mailer")
    text = adapter.strip()
    try:
        cls = import_dotted(text)
    except LookupError as exc:
        raise UnknownAdapterError("mailer", text, table.available(), reason=str(exc)) from None
    if not (isinstance(cls, type) and issubclass(cls, BaseEmailBackend)):
        raise UnknownAdapterError(
            "mailer", text, table.available(), reason=f'"{text}" is not a Django e-mail backend'
        )
    return text


def email_settings_of(adapter: str, options: Any) -> dict[str, Any]:
    """Return the ``EMAIL_*`` settings of one adapter and its options.

    For the ``provider`` adapter ``EMAIL_BACKEND`` is the provider's own backend (its
    ``backend_path`` option), so Django's helpers call django-anymail unchanged.
    """
    path = backend_path(adapter)
    if path.endswith(".ProviderMailer"):
        from .adapters.provider import provider_backend

        provider_backend(options.backend_path)  # refuse a bad path here, not at the first send
        path = options.backend_path.strip()
    return {
        "EMAIL_BACKEND": path,
        "EMAIL_HOST": options.host,
        "EMAIL_PORT": int(options.port),
        "EMAIL_HOST_USER": options.username,
        "EMAIL_HOST_PASSWORD": options.password,
        "EMAIL_USE_TLS": options.encryption == "starttls",
        "EMAIL_USE_SSL": options.encryption == "tls",
        "EMAIL_TIMEOUT": options.timeout.total_seconds() or None,
        "EMAIL_MAX_MESSAGE_SIZE": int(options.max_message_size),
        "EMAIL_LOG_BODY": options.log_body,
    }


def django_email_settings(config: Config | Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Return the ``EMAIL_*`` settings ``TOOLKIT["mailer"]["default"]`` implies.

    ``config`` is a loaded :class:`Config`, a ``TOOLKIT`` mapping (the environment is
    applied on top, as the container does), or ``None`` for ``settings.TOOLKIT``. Other
    Django e-mail settings (``DEFAULT_FROM_EMAIL``, ``SERVER_EMAIL``, ``ADMINS``,
    ``EMAIL_SUBJECT_PREFIX``) are not the battery's and stay yours to set.
    """
    cfg = Config.of(config).service("mailer", "default")
    return email_settings_of(cfg.adapter, cfg.options)


def open_held(cls: type[Mailer], ctx: OpenContext) -> Held[Mailer]:
    """Build the instance's backend once (bad options fail the open), then hold a getter."""
    from django.core.mail import get_connection

    from toolkit_batteries.core.djangoready import ensure_django
    from toolkit_batteries.core.slots import Held

    ensure_django()
    path = f"{cls.__module__}.{cls.__qualname__}"
    instance, options = ctx.instance, ctx.options

    def get() -> Mailer:
        return get_connection(path, instance=instance, options=options)  # type: ignore[no-any-return]

    get()
    return Held(get, f"mailer.{instance}")
