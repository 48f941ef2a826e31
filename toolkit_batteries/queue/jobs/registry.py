"""Jobs: plain functions registered under a name, with a queue and a retry policy.

::

    from toolkit_batteries.queue.jobs import job

    @job(queue="emails", retry={"max_attempts": 5, "base_delay": "30s", "multiplier": 2})
    def send_welcome(user_id: int) -> None:
        ...

    send_welcome(7)              # runs now, in this process (it is still the function)
    send_welcome.dispatch(7)     # runs later, on a worker

A job is found by name on the worker, so the module defining it must be imported
there: put jobs in ``<app>/jobs.py`` of an installed app (discovered automatically) or
list their modules in ``TOOLKIT_JOBS["imports"]``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any

from toolkit_batteries.core.groups import RetryPolicy

from ..errors import UnknownJobError
from .backoff import retry_policy

__all__ = ["Job", "JobRegistry", "UnknownJobError", "job", "registry"]

_QUEUE_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,100}$")


class Job:
    """A registered function: call it to run it now, ``dispatch`` it to run it on a worker.

    A job is also a django_tasks ``Task`` by behaviour: ``enqueue`` / ``aenqueue`` return a
    ``TaskResult`` (through the ``TASKS`` alias of the toolkit backend on the jobs' queue
    instance, or Celery when that is the dispatcher), ``using(queue_name=...,
    run_after=..., backend=...)`` returns a modified copy, ``call`` / ``acall`` run it
    now, and ``queue_name``, ``priority``, ``run_after``, ``takes_context``, ``backend``
    and ``module_path`` read as on a ``Task``. It is not a ``Task`` subclass, so defining
    a job never imports ``django_tasks`` (slow) nor needs ``TASKS`` at import time.
    """

    priority = 0
    takes_context = False

    def __init__(
        self,
        func: Callable[..., Any],
        name: str,
        queue: str,
        retry: RetryPolicy,
        *,
        run_after: datetime | None = None,
        backend: str | None = None,
    ):
        self.func = func
        self.name = name
        self.queue = queue
        self.retry = retry
        #: The earliest this call may run (``using(run_after=...)``); ``None``: at once.
        self.run_after = run_after
        self._backend = backend
        self.__doc__ = func.__doc__
        self.__wrapped__ = func
        self.__module__ = func.__module__
        self.__name__ = getattr(func, "__name__", name)
        self.__qualname__ = getattr(func, "__qualname__", name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the job now, in this process."""
        return self.func(*args, **kwargs)

    def dispatch(self, *args: Any, **kwargs: Any) -> str:
        """Send the job to the process's dispatcher; return the message (or task) id."""
        from .dispatch import dispatcher

        return dispatcher().dispatch(self, args, kwargs, delay=self._delay())

    def dispatch_in(self, delay: float | timedelta, *args: Any, **kwargs: Any) -> str:
        """Send the job to run no earlier than ``delay`` (seconds or a timedelta) from now."""
        from .dispatch import dispatcher

        return dispatcher().dispatch(self, args, kwargs, delay=delay)

    # ------------------------------------------------------------------ the Task surface

    @property
    def queue_name(self) -> str:
        """The job queue (django_tasks' name for :attr:`queue`)."""
        return self.queue

    @property
    def module_path(self) -> str:
        """The function's dotted path, as ``Task.module_path``."""
        return f"{self.func.__module__}.{self.func.__qualname__}"

    @property
    def backend(self) -> str:
        """The ``TASKS`` alias ``enqueue`` uses: the toolkit backend on the jobs' queue."""
        if self._backend is not None:
            return self._backend
        from django_tasks import task_backends

        from .dispatch import jobs_settings
        from .slot import backend_alias

        return backend_alias(task_backends, jobs_settings().queue_instance)

    def get_backend(self) -> Any:
        """Return the django_tasks backend of :attr:`backend`."""
        from django_tasks import task_backends

        return task_backends[self.backend]

    def using(
        self,
        *,
        priority: int | None = None,
        queue_name: str | None = None,
        run_after: datetime | None = None,
        backend: str | None = None,
    ) -> Job:
        """Return a copy with other defaults (not registered: the worker finds it by name)."""
        if queue_name is not None and (
            not isinstance(queue_name, str) or not _QUEUE_NAME.match(queue_name)
        ):
            raise ValueError(
                f'job "{self.name}": queue must be 1 to 100 letters, digits, "_", "." or "-"'
            )
        copy = Job(
            self.func,
            self.name,
            queue_name or self.queue,
            self.retry,
            run_after=run_after if run_after is not None else self.run_after,
            backend=backend if backend is not None else self._backend,
        )
        if priority is not None:
            copy.priority = priority
        return copy

    def enqueue(self, *args: Any, **kwargs: Any) -> Any:
        """Queue the call as django_tasks does; return its ``TaskResult`` (status READY).

        On the queue dispatcher this is the ``TASKS`` backend's ``enqueue``; with
        ``TOOLKIT_JOBS["dispatcher"] = "celery"`` the call goes to Celery (as
        :meth:`dispatch`), and the result's id is the Celery task id.
        """
        from .dispatch import dispatcher, jobs_settings

        if self._backend is None and jobs_settings().dispatcher == "celery":
            from .backend import task_result

            task_id = dispatcher().dispatch(self, args, kwargs, delay=self._delay())
            return task_result(self, task_id, args, kwargs, "celery")
        return self.get_backend().enqueue(self, args, kwargs)

    async def aenqueue(self, *args: Any, **kwargs: Any) -> Any:
        """See :meth:`enqueue`."""
        from asgiref.sync import sync_to_async

        return await sync_to_async(self.enqueue, thread_sensitive=True)(*args, **kwargs)

    def get_result(self, result_id: str) -> Any:
        """Ask the backend for a result (the toolkit's queue keeps none: NotImplementedError)."""
        return self.get_backend().get_result(result_id)

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Run the job now, in this process (``Task.call``)."""
        return self.func(*args, **kwargs)

    async def acall(self, *args: Any, **kwargs: Any) -> Any:
        """Run the job now from async code (``Task.acall``)."""
        from asgiref.sync import sync_to_async

        return await sync_to_async(self.func)(*args, **kwargs)

    def _delay(self) -> float | None:
        if self.run_after is None:
            return None
        import time

        return max(0.0, self.run_after.timestamp() - time.time())

    def __repr__(self) -> str:
        return f"<Job {self.name} queue={self.queue}>"


class JobRegistry:
    """Jobs by name. The module-level :data:`registry` is the one the decorator fills."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._listeners: list[Callable[[Job], None]] = []

    def register(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        queue: str = "default",
        retry: RetryPolicy | Mapping[str, Any] | None = None,
    ) -> Job:
        """Register ``func`` and return its :class:`Job`.

        The name defaults to ``module.qualname``. Registering another function under a
        taken name raises ``ValueError``; the same function again (a module reloaded)
        replaces the entry.
        """
        if not callable(func):
            raise TypeError("a job must be a callable")
        job_name = name or f"{func.__module__}.{func.__qualname__}"
        if not isinstance(job_name, str) or not job_name.strip():
            raise ValueError("a job name must be a non-empty string")
        if not isinstance(queue, str) or not _QUEUE_NAME.match(queue):
            raise ValueError(
                f'job "{job_name}": queue must be 1 to 100 letters, digits, "_", "." or "-"'
            )
        policy = retry_policy(retry, where=job_name)
        created = Job(func, job_name, queue, policy)
        with self._lock:
            existing = self._jobs.get(job_name)
            if existing is not None and _origin(existing.func) != _origin(func):
                raise ValueError(f'job name "{job_name}" is already registered by another function')
            self._jobs[job_name] = created
            listeners = list(self._listeners)
        for listener in listeners:
            listener(created)
        return created

    def get(self, name: str) -> Job | None:
        """Return the job registered as ``name``, or ``None``."""
        return self._jobs.get(name)

    def __getitem__(self, name: str) -> Job:
        found = self._jobs.get(name)
        if found is None:
            raise UnknownJobError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return name in self._jobs

    def __iter__(self) -> Iterator[Job]:
        with self._lock:
            return iter(list(self._jobs.values()))

    def __len__(self) -> int:
        return len(self._jobs)

    def unregister(self, name: str) -> None:
        """Forget the job ``name`` (tests use it to clean up)."""
        with self._lock:
            self._jobs.pop(name, None)

    def subscribe(self, listener: Callable[[Job], None]) -> None:
        """Call ``listener(job)`` for every job registered from now on (Celery uses it)."""
        with self._lock:
            self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[Job], None]) -> None:
        """Stop calling ``listener``."""
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)


def _origin(func: Callable[..., Any]) -> tuple[str, str]:
    return (getattr(func, "__module__", ""), getattr(func, "__qualname__", repr(func)))


#: The process's registry, filled by :func:`job`.
registry = JobRegistry()


def job(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    queue: str = "default",
    retry: RetryPolicy | Mapping[str, Any] | None = None,
    registry: JobRegistry | None = None,
) -> Any:
    """Register a function as a job: ``@job`` or ``@job(name=..., queue=..., retry=...)``.

    ``retry`` is a :class:`~toolkit_batteries.core.groups.RetryPolicy` or a mapping of the
    spec's retry keys (``{"MaxAttempts": 3, "BaseDelay": "30s", "Multiplier": 2}``);
    unset, a failed job is not retried (the spec's default of one attempt).
    """
    target = registry if registry is not None else _default()

    def decorate(function: Callable[..., Any]) -> Job:
        return target.register(function, name=name, queue=queue, retry=retry)

    return decorate(func) if func is not None else decorate


def _default() -> JobRegistry:
    return globals()["registry"]
