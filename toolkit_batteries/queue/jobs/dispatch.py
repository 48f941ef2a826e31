"""Job dispatchers: where ``job.dispatch(...)`` sends a call.

* :class:`QueueDispatcher` (``TOOLKIT_JOBS["dispatcher"] = "queue"``, the default)
  pushes the call onto the toolkit ``queue`` service, topic ``jobs:<queue name>``;
  ``manage.py queue_work`` runs it.
* :class:`~toolkit_batteries.queue.jobs.celery_dispatch.CeleryDispatcher`
  (``"celery"``) sends it to a Celery broker as the task of the same name.

:func:`dispatcher` returns the process's dispatcher, built from settings on first use
and rebuilt when ``TOOLKIT_JOBS`` changes or the services container is rebuilt. The
queue dispatcher registers itself as a dependant of its queue, so closing the container
closes the dispatcher before the queue (the spec's close order).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from ..errors import DispatcherClosedError
from .payload import encode
from .registry import Job, JobRegistry, registry
from .settings import JobsSettings, load_jobs_settings

__all__ = [
    "TOPIC_PREFIX",
    "Dispatcher",
    "DispatcherClosedError",
    "QueueDispatcher",
    "dispatch",
    "dispatcher",
    "import_job_modules",
    "jobs_settings",
    "reset_dispatchers",
    "resolve_job",
    "topic_for",
]

#: Queue topics of jobs are ``jobs:<queue name>``.
TOPIC_PREFIX = "jobs:"

#: A call's positional and keyword arguments and its delay, as ``dispatch`` takes them.
Args = Sequence[Any]
Kwargs = Mapping[str, Any] | None
Delay = float | timedelta | None


def topic_for(queue_name: str) -> str:
    """Return the queue topic holding the jobs of queue ``queue_name``."""
    return TOPIC_PREFIX + queue_name


def resolve_job(job: Job | str, jobs: JobRegistry | None = None) -> Job:
    """Return ``job`` itself, or the registered job of that name (``UnknownJobError``)."""
    if isinstance(job, Job):
        return job
    if isinstance(job, str):
        return (jobs or registry)[job]
    raise TypeError("job must be a Job (from @job) or a registered job name")


class Dispatcher:
    """What every dispatcher offers, and the part they share.

    A call is checked the same way whatever carries it (the dispatcher is open, the job
    is known, the arguments encode as JSON) before :meth:`_send` hands it to the queue
    or to Celery; so a bad call fails alike under either ``TOOLKIT_JOBS["dispatcher"]``.
    """

    def __init__(self, *, jobs: JobRegistry | None = None) -> None:
        self.jobs = jobs or registry
        self._closed = False

    def dispatch(
        self,
        job: Job | str,
        args: Sequence[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
        *,
        delay: float | timedelta | None = None,
    ) -> str:
        """Send one call of ``job``; return its id (the message's, or the Celery task's)."""
        if self._closed:
            raise DispatcherClosedError("the job dispatcher is closed")
        target = resolve_job(job, self.jobs)
        body = encode(target.name, args, kwargs)
        return self._send(target, body, args, kwargs, delay)

    def _send(self, target: Job, body: bytes, args: Args, kwargs: Kwargs, delay: Delay) -> str:
        """Hand the checked call over; ``body`` is its encoded form, the rest as given."""
        raise NotImplementedError

    @property
    def closed(self) -> bool:
        """Tell whether :meth:`close` has run."""
        return self._closed

    def close(self) -> None:
        """Stop accepting dispatches and release what the dispatcher holds."""
        self._closed = True


class QueueDispatcher(Dispatcher):
    """Push job calls onto a toolkit queue (any adapter), topic ``jobs:<job.queue>``.

    Closing it only refuses further dispatches: the queue belongs to the container.
    """

    def __init__(self, queue: Any, *, jobs: JobRegistry | None = None) -> None:
        super().__init__(jobs=jobs)
        self.queue = queue

    def _send(self, target: Job, body: bytes, args: Args, kwargs: Kwargs, delay: Delay) -> str:
        """Push the encoded call; return the message id."""
        return self.queue.push(topic_for(target.queue), body, delay=delay)

    def __repr__(self) -> str:
        return f"<QueueDispatcher {self.queue!r}>"


# ---------------------------------------------------------------------- process state

_lock = threading.Lock()
_settings: JobsSettings | None = None
_queue_dispatchers: weakref.WeakKeyDictionary[Any, QueueDispatcher] = weakref.WeakKeyDictionary()
_celery: Any = None
_signals_connected = False


def jobs_settings() -> JobsSettings:
    """Return ``TOOLKIT_JOBS`` resolved (cached until the setting changes)."""
    global _settings
    current = _settings
    if current is not None:
        return current
    from django.conf import settings

    loaded = load_jobs_settings(getattr(settings, "TOOLKIT_JOBS", None))
    with _lock:
        _connect_signals()
        _settings = loaded
    return loaded


def dispatcher() -> Dispatcher:
    """Return the process's dispatcher for the current settings and services container."""
    conf = jobs_settings()
    if conf.dispatcher == "celery":
        return _celery_dispatcher(conf)
    from toolkit_batteries import services

    container = services.container()
    found = _queue_dispatchers.get(container)
    if found is not None and not found.closed:
        return found
    queue = container.queue(conf.queue_instance)
    with _lock:
        found = _queue_dispatchers.get(container)
        if found is None or found.closed:
            found = QueueDispatcher(queue)
            queue.add_dependant(found)
            _queue_dispatchers[container] = found
    return found


def _celery_dispatcher(conf: JobsSettings) -> Dispatcher:
    global _celery
    with _lock:
        if _celery is None:
            from .celery_dispatch import CeleryDispatcher

            _celery = CeleryDispatcher.from_settings(conf)
        return _celery


def dispatch(job: Job | str, *args: Any, **kwargs: Any) -> str:
    """Send ``job(*args, **kwargs)`` to the process's dispatcher; return its id."""
    return dispatcher().dispatch(job, args, kwargs)


def reset_dispatchers() -> None:
    """Forget cached settings and dispatchers, closing the Celery one (tests, reloads)."""
    global _settings, _celery
    with _lock:
        _settings = None
        celery, _celery = _celery, None
        queue_dispatchers = list(_queue_dispatchers.values())
        _queue_dispatchers.clear()
    for found in queue_dispatchers:
        found.close()
        found.queue.remove_dependant(found)
    if celery is not None:
        celery.close()


def import_job_modules(conf: JobsSettings | None = None) -> None:
    """Import every installed app's ``jobs`` module and the modules in ``imports``."""
    from importlib import import_module

    from django.utils.module_loading import autodiscover_modules

    conf = conf or jobs_settings()
    if conf.autodiscover:
        autodiscover_modules("jobs")
    for module in conf.imports:
        import_module(module)


def _connect_signals() -> None:
    global _signals_connected
    if _signals_connected:
        return
    from django.core.signals import setting_changed

    setting_changed.connect(_on_setting_changed, dispatch_uid="toolkit_batteries.queue.jobs")
    _signals_connected = True


def _on_setting_changed(*, setting: str, **kwargs: Any) -> None:
    if setting in ("TOOLKIT_JOBS", "TOOLKIT"):
        reset_dispatchers()
