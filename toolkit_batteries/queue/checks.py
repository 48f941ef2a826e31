"""Behaviour check of ``queue``; every ID is in docs/batteries/queue.md, "Checks".

Shape rules are declared on the options. Here: ``E004``, the ``TOOLKIT_JOBS`` setting
against the configured queue instances. Messages name instances and keys, never values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import error
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
        return [error("toolkit_queue.E004", str(exc), None, "settings.TOOLKIT_JOBS")]
    if conf.dispatcher == "queue" and conf.queue_instance not in config.instances("queue"):
        return [
            error(
                "toolkit_queue.E004",
                f'TOOLKIT_JOBS: "queue_instance" names a queue instance that is not configured '
                f'("{conf.queue_instance}")',
                'configure it under TOOLKIT["queue"] or use "default"',
                "settings.TOOLKIT_JOBS",
            )
        ]
    return []
