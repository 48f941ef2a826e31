"""The Celery app of the toolkit's jobs, for ``celery -A toolkit_batteries.queue.celery_app``.

``app`` (also reachable as ``celery``) is built on first access from Django settings
(``TOOLKIT_JOBS``; ``DJANGO_SETTINGS_MODULE`` must be set): Django is set up, the job
modules are imported (every installed app's ``jobs.py`` and ``TOOLKIT_JOBS["imports"]``),
and every registered job becomes a task of the same name::

    DJANGO_SETTINGS_MODULE=mysite.settings \\
        celery -A toolkit_batteries.queue.celery_app worker -Q default --pool=solo

``python manage.py queue_work`` does the same when the dispatcher is ``celery``.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["get_app"]

_lock = threading.Lock()
_app: Any = None


def get_app() -> Any:
    """Return the process's Celery app, building it from Django settings once."""
    global _app
    with _lock:
        if _app is None:
            import django
            from django.apps import apps

            if not apps.ready:
                django.setup()
            from .jobs.celery_dispatch import build_app
            from .jobs.dispatch import import_job_modules, jobs_settings

            conf = jobs_settings()
            import_job_modules(conf)
            _app = build_app(conf)
        return _app


def __getattr__(name: str) -> Any:
    """Build ``app`` / ``celery`` lazily, so importing this module costs nothing."""
    if name in ("app", "celery"):
        return get_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
