"""The Celery path: the same registered jobs, sent to and run by Celery.

With ``TOOLKIT_JOBS = {"dispatcher": "celery", "broker_url": "amqp://..."}``,
``job.dispatch(...)`` sends task ``job.name`` to Celery queue ``job.queue``, and
:func:`build_app` makes a Celery app whose tasks are the registered jobs. A failing task
retries with ``countdown`` from the same :func:`~.backoff.backoff_delay` the queue
worker uses, up to the job's ``max_attempts`` (total, first included); the last failure
raises, so the task ends in ``FAILURE``. Tasks acknowledge late (after they ran) and are
rejected back to the broker when a worker process dies, so Celery keeps the queue
worker's at-least-once delivery; ``worker_prefetch_multiplier`` is 1.

Run a worker with ``python manage.py queue_work`` (which starts Celery's worker when the
dispatcher is ``celery``) or ``celery -A toolkit_batteries.queue.celery_app worker``.
Celery is imported here only, when the Celery dispatcher is first used.
"""

from __future__ import annotations

import weakref
from typing import Any

from toolkit_batteries.core.errors import MissingExtraError

from ..base import seconds
from .backoff import backoff_delay, max_attempts
from .dispatch import Args, Delay, Dispatcher, Kwargs
from .registry import Job, JobRegistry, registry
from .settings import JobsSettings

__all__ = ["CeleryDispatcher", "build_app", "register_task"]


def _celery() -> Any:
    with MissingExtraError.guard("queue", "celery", "celery", "celery"):
        import celery
    return celery


def register_task(app: Any, job: Job) -> Any:
    """Register ``job`` as the Celery task of the same name, retrying by its policy."""
    policy = job.retry
    allowed = max_attempts(policy)

    def run(task: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return job.func(*args, **kwargs)
        except Exception as exc:
            attempt = task.request.retries + 1
            if attempt >= allowed:
                raise
            raise task.retry(
                exc=exc, countdown=backoff_delay(policy, attempt), max_retries=allowed - 1
            ) from None

    run.__doc__ = job.__doc__
    return app.task(
        name=job.name,
        bind=True,
        shared=False,  # this app only: a shared task would join every Celery app's registry
        max_retries=allowed - 1,
        acks_late=True,
        reject_on_worker_lost=True,
    )(run)


def build_app(conf: JobsSettings, *, jobs: JobRegistry | None = None) -> Any:
    """Build a Celery app from ``TOOLKIT_JOBS`` with every registered job as a task.

    Jobs registered later (a module imported afterwards) become tasks as they register.
    """
    if not conf.broker_url:
        from .settings import JobsConfigurationError

        raise JobsConfigurationError("broker_url", "is required to build the Celery app")
    celery = _celery()
    jobs = jobs or registry
    app = celery.Celery("toolkit_jobs", set_as_current=False)
    app.conf.update(
        broker_url=conf.broker_url,
        result_backend=conf.result_backend or None,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue="default",
        broker_connection_retry_on_startup=True,
        enable_utc=True,
        timezone="UTC",
    )
    app.conf.update(task_routes=(_router(jobs),))
    app.conf.update(dict(conf.celery))
    for job in jobs:
        register_task(app, job)
    app_ref = weakref.ref(app)

    def on_register(job: Job) -> None:
        current = app_ref()
        if current is None:
            jobs.unsubscribe(on_register)
        else:
            register_task(current, job)

    jobs.subscribe(on_register)
    return app


def _router(jobs: JobRegistry) -> Any:
    """Route each job's task to the job's queue (``task.delay`` included)."""

    def route(name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **kw: Any):
        found = jobs.get(name)
        return {"queue": found.queue} if found is not None else None

    return route


class CeleryDispatcher(Dispatcher):
    """Send job calls to Celery by task name (checked as the queue path checks them)."""

    def __init__(self, app: Any, *, jobs: JobRegistry | None = None) -> None:
        super().__init__(jobs=jobs)
        self.app = app

    @classmethod
    def from_settings(cls, conf: JobsSettings) -> CeleryDispatcher:
        """Build the dispatcher and its app from ``TOOLKIT_JOBS``."""
        return cls(build_app(conf))

    def _send(self, target: Job, body: bytes, args: Args, kwargs: Kwargs, delay: Delay) -> str:
        """Send task ``target.name`` to Celery queue ``target.queue``; return the task id.

        Celery encodes the arguments itself; ``body`` only proved they are JSON.
        """
        countdown = seconds(delay, "delay") or None
        result = self.app.send_task(
            target.name,
            args=list(args),
            kwargs=dict(kwargs or {}),
            queue=target.queue,
            countdown=countdown,
        )
        return str(result.id)

    def close(self) -> None:
        """Refuse further dispatches and release the app's broker connections."""
        super().close()
        self.app.close()

    def __repr__(self) -> str:
        return "<CeleryDispatcher>"
