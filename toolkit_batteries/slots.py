"""Django's settings slots, derived from ``TOOLKIT``: one module, one signature.

Where Django has a slot for a service, the battery's adapter IS the Django backend and
Django's handler (``caches``, ``storages``, ``connections``, ``task_backends``,
``mail.get_connection``, the session engine) is the only registry that builds and holds
it. ``settings.py`` derives each slot from ``TOOLKIT`` here, so a reader sees where every
service lives::

    from toolkit_batteries import slots

    DATABASES = slots.databases(TOOLKIT)
    CACHES = slots.caches(TOOLKIT)
    STORAGES = slots.storages(TOOLKIT)
    TASKS = slots.tasks(TOOLKIT)
    SESSION_ENGINE = slots.sessions(TOOLKIT)
    LOCALE_PATHS = slots.locale_paths(TOOLKIT)
    globals().update(slots.email(TOOLKIT))        # EMAIL_BACKEND, EMAIL_HOST, ...

Every function takes the ``TOOLKIT`` mapping (the environment is applied on top, as the
container does), a loaded :class:`~toolkit_batteries.core.config.Config`, or ``None`` for
``settings.TOOLKIT``. Options are not decoded here: an entry carries the options that
differ from their defaults, and the backend decodes them once, when Django builds it.
Importing this module imports no battery.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["caches", "databases", "email", "locale_paths", "sessions", "storages", "tasks"]

#: ``SESSION_ENGINE`` of every toolkit project: Django's engine over the session battery.
SESSION_ENGINE = "toolkit_batteries.session.engine"


def databases(toolkit: Any = None) -> dict[str, dict[str, Any]]:
    """Return ``DATABASES``: one alias per ``db`` instance, plus batteries' own ``dsn``\\ s."""
    from toolkit_batteries.db.databases import django_databases

    return django_databases(toolkit)


def caches(
    toolkit: Any = None, *, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """Return ``CACHES``: one alias per ``cache`` instance (``kvserver`` is django-redis's)."""
    from toolkit_batteries.cache.settings import django_cache_settings

    return django_cache_settings(toolkit, overrides=overrides)


def storages(
    toolkit: Any = None, *, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """Return ``STORAGES``: one alias per ``storage`` instance, plus ``staticfiles``."""
    from toolkit_batteries.storage.settings import django_storage_settings

    return django_storage_settings(toolkit, overrides=overrides)


def email(toolkit: Any = None) -> dict[str, Any]:
    """Return ``EMAIL_BACKEND`` and the ``EMAIL_*`` settings of ``mailer.default``."""
    from toolkit_batteries.mailer.settings import django_email_settings

    return django_email_settings(toolkit)


def tasks(toolkit: Any = None, **options: Any) -> dict[str, dict[str, Any]]:
    """Return ``TASKS`` (django-tasks): one backend per ``queue`` instance."""
    from toolkit_batteries.queue.jobs.slot import django_task_settings

    return django_task_settings(toolkit, **options)


def sessions(toolkit: Any = None) -> str:
    """Return ``SESSION_ENGINE``: Django's sessions in the ``session.default`` store.

    The session configuration is loaded now, so an unknown adapter or option fails when
    settings load, naming the field (a dotted adapter path is imported to check it).
    """
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.loading import adapter_table, resolve_adapter

    adapter = Config.of(toolkit).service("session", "default").adapter.strip()
    if adapter.lower() not in adapter_table("session").names:
        resolve_adapter("session", adapter)  # UnknownAdapterError names the choices
    return SESSION_ENGINE


def locale_paths(toolkit: Any = None) -> list[str]:
    """Return ``LOCALE_PATHS``: the catalog directory of every ``i18n`` ``embed`` instance."""
    from toolkit_batteries.i18n.settings import i18n_locale_paths

    return i18n_locale_paths(toolkit)
