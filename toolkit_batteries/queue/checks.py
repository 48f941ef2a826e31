"""System checks of the ``queue`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` with the
battery's own configuration, after its ``toolkit_queue.E001`` (the adapter resolves):

* ``toolkit_queue.E002``: the ``db`` adapter's ``table`` names another table than the
  migrated ``toolkit_queue_message`` (the tables are models; the option cannot move them).
* ``toolkit_queue.E003``: the ``db`` adapter's ``dsn`` does not parse as a PostgreSQL
  URL, a libpq string or a SQLite path.
* ``toolkit_queue.E004``: ``TOOLKIT_JOBS`` is invalid (unknown key, unknown dispatcher,
  ``celery`` without ``broker_url``) or names a queue instance that is not configured.

Messages name instances and keys, never values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.errors import ConfigurationError

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check the ``TOOLKIT_JOBS`` setting against the configured queue instances."""
    return _jobs_checks(config)


def _jobs_checks(config: Config) -> list[checks.CheckMessage]:
    from django.conf import settings

    from .jobs.settings import load_jobs_settings

    try:
        conf = load_jobs_settings(getattr(settings, "TOOLKIT_JOBS", None))
    except ConfigurationError as exc:
        return [checks.Error(str(exc), obj="settings.TOOLKIT_JOBS", id="toolkit_queue.E004")]
    if conf.dispatcher == "queue" and conf.queue_instance not in config.instances("queue"):
        return [
            checks.Error(
                f'TOOLKIT_JOBS: "queue_instance" names a queue instance that is not configured '
                f'("{conf.queue_instance}")',
                hint='configure it under TOOLKIT["queue"] or use "default"',
                obj="settings.TOOLKIT_JOBS",
                id="toolkit_queue.E004",
            )
        ]
    return []
