"""A minimal Django for scripts that build a ``Container(config)`` without a project.

Batteries hand their work to Django's handlers (``connections``, ``caches``), which need
configured settings. A script that never set ``DJANGO_SETTINGS_MODULE`` gets a Django
configured here with the SQL batteries' apps (so their models and migrations exist) and
no database of its own: the container registers each database it opens as an alias.
"""

from __future__ import annotations

import threading

__all__ = ["SCRIPT_APPS", "ensure_django"]

#: The apps a script's Django has: the batteries whose tables are models.
SCRIPT_APPS: tuple[str, ...] = (
    "toolkit_batteries.db",
    "toolkit_batteries.cache",
    "toolkit_batteries.queue",
    "toolkit_batteries.idempotency",
    "toolkit_batteries.session",
    "toolkit_batteries.scheduler",
)

_lock = threading.Lock()


def ensure_django() -> None:
    """Configure and set up Django for a script, unless a project already did."""
    from django.apps import apps
    from django.conf import settings

    if settings.configured and apps.ready:
        return
    with _lock:
        import django

        if not settings.configured:
            settings.configure(
                INSTALLED_APPS=list(SCRIPT_APPS),
                DATABASES={},
                USE_TZ=True,
                DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
            )
        if not apps.ready and not apps.loading:
            django.setup()
