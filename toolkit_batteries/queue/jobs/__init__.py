"""Jobs on top of the queue: ``@job``, ``dispatch``, the worker and the Celery path.

::

    from toolkit_batteries.queue.jobs import job

    @job(queue="emails", retry={"max_attempts": 3, "base_delay": "30s", "multiplier": 2})
    def send_welcome(user_id: int) -> None: ...

    send_welcome.dispatch(42)          # or dispatch(send_welcome, 42)

    # python manage.py queue_work --queue emails --concurrency 4

Which dispatcher runs the call is the ``TOOLKIT_JOBS["dispatcher"]`` setting: the
toolkit ``queue`` service (default) or Celery. Django's ``TASKS`` slot (the
``django-tasks`` backport) is derived with ``TASKS = django_task_settings(TOOLKIT)``:
``@task`` from ``django_tasks`` then enqueues onto the same queue and the same worker
runs it (:class:`~toolkit_batteries.queue.jobs.backend.QueueBackend`). Only the standard
library is imported here; ``django_tasks`` loads when a task is first enqueued or run,
Celery when the Celery dispatcher is first used.
"""

from __future__ import annotations

from typing import Any

from .backoff import backoff_delay, max_attempts, retry_policy
from .dispatch import (
    Dispatcher,
    DispatcherClosedError,
    QueueDispatcher,
    dispatch,
    dispatcher,
    import_job_modules,
    jobs_settings,
    reset_dispatchers,
    topic_for,
)
from .payload import Call, PayloadError
from .registry import Job, JobRegistry, UnknownJobError, job, registry
from .settings import JobsConfigurationError, JobsSettings, load_jobs_settings
from .slot import django_task_settings, task_entry
from .worker import Worker, WorkerStats

__all__ = [
    "Call",
    "Dispatcher",
    "DispatcherClosedError",
    "Job",
    "JobRegistry",
    "JobsConfigurationError",
    "JobsSettings",
    "PayloadError",
    "QueueBackend",
    "QueueDispatcher",
    "ToolkitTask",
    "UnknownJobError",
    "Worker",
    "WorkerStats",
    "backoff_delay",
    "dispatch",
    "dispatcher",
    "django_task_settings",
    "import_job_modules",
    "job",
    "jobs_settings",
    "load_jobs_settings",
    "max_attempts",
    "registry",
    "reset_dispatchers",
    "retry_policy",
    "task_entry",
    "topic_for",
]


def __getattr__(name: str) -> Any:
    """Import ``QueueBackend`` / ``ToolkitTask`` (and ``django_tasks``) on first use only."""
    if name in ("QueueBackend", "ToolkitTask"):
        from . import backend

        return getattr(backend, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
