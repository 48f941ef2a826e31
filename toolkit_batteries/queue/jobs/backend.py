"""``QueueBackend``: Django's ``TASKS`` slot (the ``django-tasks`` backport) on the toolkit queue.

::

    # settings.py
    from toolkit_batteries.queue.jobs import django_task_settings
    TASKS = django_task_settings(TOOLKIT)

    # shop/tasks.py
    from django_tasks import task

    @task(queue_name="emails", retry={"max_attempts": 3, "base_delay": "30s"})
    def send_receipt(order_id: int) -> None: ...

    send_receipt.enqueue(42)          # -> TaskResult (READY), id = the queue message id

``enqueue`` pushes ``{"v": 1, "job": "<module path>", "task": 1, "args", "kwargs"}`` onto
topic ``jobs:<queue_name>`` of the configured queue instance (memory, kvserver or db; on
db the push joins the caller's ``transaction.atomic()``); ``manage.py queue_work`` (the
toolkit :class:`~toolkit_batteries.queue.jobs.Worker`) imports the task by that path and
runs it with the toolkit's retry policy: the task's own ``retry`` (``@task(retry=...)``
while ``TASKS`` names this backend) or the backend's ``OPTIONS["retry"]``, else one
attempt; the last failure goes to the topic's dead list.

What the queue adapters allow, and so what the backend declares:

* ``supports_defer = True``: ``run_after`` becomes the push's ``delay``;
* ``supports_async_task = True``: the worker runs a coroutine task with ``async_to_sync``;
* ``supports_get_result = False``: queues keep no results (a finished message is deleted),
  so ``get_result`` raises ``NotImplementedError``; store what a caller must read back;
* ``supports_priority = False``: topics are first in, first out.

``django_tasks`` is imported here only (it is slow to import); the ``@job`` registry and
the worker's job path never need it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone
from django.utils.module_loading import import_string
from django_tasks import TaskResult, TaskResultStatus
from django_tasks.backends.base import BaseTaskBackend
from django_tasks.base import Task
from django_tasks.exceptions import InvalidTaskError
from django_tasks.signals import task_enqueued

from toolkit_batteries.core.groups import RetryPolicy

from .backoff import retry_policy
from .payload import encode
from .registry import Job

__all__ = ["QueueBackend", "ToolkitTask", "resolve_task", "retry_for", "task_result"]

_known: dict[str, Task] = {}
_known_lock = threading.Lock()


@dataclass(frozen=True, kw_only=True)
class ToolkitTask(Task):
    """A django_tasks ``Task`` with the toolkit's extra: its own ``retry`` policy.

    ``@task(retry={...})`` builds one when the alias's backend is :class:`QueueBackend`
    (``task_class``). The most recently made one is remembered by module path, so a
    worker in the same process finds it even when it was made outside a module's top
    level (tests); other processes import it by that path.
    """

    #: The task's own policy; ``None`` takes the backend's ``OPTIONS["retry"]``.
    retry: Any = None

    def __post_init__(self) -> None:
        if self.retry is not None:
            object.__setattr__(self, "retry", retry_policy(self.retry, where=self.module_path))
        Task.__post_init__(self)
        with _known_lock:
            _known[self.module_path] = self


class QueueBackend(BaseTaskBackend):
    """Enqueue django_tasks ``Task`` (and ``@job``) calls onto a toolkit queue instance.

    ``OPTIONS``: ``queue_instance`` (``TOOLKIT["queue"]`` instance, ``"default"``) and
    ``retry`` (default retry policy of tasks without one). Django's ``task_backends``
    builds and holds it per thread; the queue itself is the services container's
    (``services.queue(instance)``), looked up on every enqueue so a rebuilt container
    (``override_settings(TOOLKIT=...)``) is followed.
    """

    task_class = ToolkitTask
    supports_defer = True
    supports_async_task = True
    supports_get_result = False
    supports_priority = False

    def __init__(self, alias: str, params: dict) -> None:
        super().__init__(alias, params)
        options = dict(self.options or {})
        unknown = sorted(set(options) - {"queue_instance", "retry"})
        if unknown:
            raise InvalidTaskError(
                f'TASKS["{alias}"]["OPTIONS"]: unknown key(s) {", ".join(unknown)} '
                "(QueueBackend takes queue_instance and retry)"
            )
        self.queue_instance = str(options.get("queue_instance") or "default")
        #: Retry policy of tasks that carry none.
        self.retry: RetryPolicy = retry_policy(options.get("retry"), where=f"TASKS {alias}")
        self._valid: set[Any] = set()

    @property
    def queue(self) -> Any:
        """Return the toolkit queue this backend pushes onto."""
        from toolkit_batteries import services

        return services.queue(self.queue_instance)

    def validate_task(self, task: Any) -> None:
        """Check ``task`` as Django does; a ``@job`` is found by name, so it may be local."""
        if isinstance(task, Job):
            if task.priority != 0:
                raise InvalidTaskError("Backend does not support setting priority of tasks.")
            if task.run_after is not None and not timezone.is_aware(task.run_after):
                raise InvalidTaskError("run_after must be an aware datetime.")
            return
        super().validate_task(task)

    def enqueue(self, task: Any, args: Any, kwargs: Any) -> TaskResult:
        """Push one call of ``task`` onto ``jobs:<queue_name>``; return a READY result."""
        self._validate_once(task)
        queue = self.queue
        delay = run_after_delay(task.run_after, queue.clock())
        if isinstance(task, Job):
            body = encode(task.name, args, kwargs)
        else:
            body = encode(task.module_path, args, kwargs, task=True)
        from .dispatch import topic_for

        message_id = queue.push(topic_for(task.queue_name), body, delay=delay)
        result = task_result(task, message_id, args, kwargs, self.alias)
        object.__setattr__(result, "enqueued_at", timezone.now())
        if not isinstance(task, Job):
            task_enqueued.send(type(self), task_result=result)
        return result

    def _validate_once(self, task: Any) -> None:
        """Validate ``task`` on its first enqueue through this backend object only.

        Django's check inspects the function's signature, the hot part of an enqueue; a
        task is frozen and this object is rebuilt when ``TASKS`` changes, so once is enough.
        """
        try:
            if task in self._valid:
                return
        except TypeError:  # unhashable (a field holds a list): check every time
            self.validate_task(task)
            return
        self.validate_task(task)
        if len(self._valid) < 4096:
            self._valid.add(task)

    def get_result(self, result_id: str) -> TaskResult:
        """Queues keep no results: a finished message is deleted."""
        raise NotImplementedError(
            "QueueBackend does not keep results (supports_get_result is False)"
        )

    def __repr__(self) -> str:
        return f"<QueueBackend {self.alias} queue.{self.queue_instance}>"


def task_result(
    task: Any,
    result_id: str,
    args: Any,
    kwargs: Any,
    alias: str,
    *,
    status: Any = None,
    attempts: int = 0,
    worker_id: str = "",
) -> TaskResult:
    """Return the ``TaskResult`` of one call (READY unless ``status`` says otherwise)."""
    return TaskResult(
        task=task,
        id=result_id,
        status=status or TaskResultStatus.READY,
        enqueued_at=None,
        started_at=None,
        last_attempted_at=None,
        finished_at=None,
        args=list(args),
        kwargs=dict(kwargs or {}),
        backend=alias,
        errors=[],
        worker_ids=[worker_id] * attempts,
    )


def resolve_task(path: str) -> Task | None:
    """Return the ``Task`` at ``path`` (a module path from a message), or ``None``.

    Only a ``Task`` object is accepted: a message cannot make the worker call an arbitrary
    function, just a function someone declared a task.
    """
    found = _known.get(path)
    if found is not None:
        return found
    try:
        candidate = import_string(path)
    except (ImportError, ValueError):
        return None
    return candidate if isinstance(candidate, Task) else None


def retry_for(task: Task) -> RetryPolicy:
    """Return the retry policy of ``task``: its own, else its backend's, else one attempt."""
    own = getattr(task, "retry", None)
    if isinstance(own, RetryPolicy):
        return own
    from django_tasks import task_backends

    try:
        backend = task_backends[task.backend]
    except Exception:  # the alias is gone on this side: run it once, like a plain job
        return RetryPolicy()
    return backend.retry if isinstance(backend, QueueBackend) else RetryPolicy()


def run_after_delay(run_after: datetime | None, now: float) -> float | None:
    """Return seconds from ``now`` (epoch) until ``run_after``, or ``None``."""
    if run_after is None:
        return None
    return max(0.0, run_after.timestamp() - now)
