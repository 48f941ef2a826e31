"""What the queue battery adds to ``toolkit doctor``: jobs no worker would ever run.

``toolkit doctor`` asks each battery for its ``doctor.doctor_warnings(setup)``
(:func:`~toolkit_batteries.core.catalog.battery_hook`), so the kernel never imports this
battery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit_batteries.core.doctor import Setup

__all__ = ["doctor_warnings"]


def doctor_warnings(setup: Setup) -> list[str]:
    """Warn about jobs a separately started ``queue_work`` would never run.

    A job on a queue outside what the workers serve, or any job while the jobs' queue
    is the per-process memory adapter, waits forever without an error anywhere.
    """
    from toolkit_batteries.core.doctor import _message
    from toolkit_batteries.core.errors import ConfigurationError

    from .jobs import import_job_modules, jobs_settings
    from .jobs.served import unserved_job_warnings

    try:
        conf = jobs_settings()
        import_job_modules(conf)
        adapter = setup.container.config.service("queue", conf.queue_instance).adapter
    except (ConfigurationError, ImportError) as exc:
        return [f"jobs not checked: {_message(exc)}"]
    return unserved_job_warnings(conf, adapter)
