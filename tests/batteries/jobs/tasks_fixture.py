"""django_tasks ``@task`` functions the jobs tests enqueue through ``QueueBackend``.

They are module-level ``Task`` objects, as django_tasks requires, so a worker finds them
by module path: the in-process workers of the tests and the ``manage.py queue_work``
child of the subprocess test alike. ``tests.settings`` has no ``TASKS``, so at import they
are plain ``Task`` objects of django_tasks' default backend; the tests point ``TASKS`` at
the toolkit backend with ``override_settings`` before enqueueing. Each call is recorded
in :data:`CALLS` (in-process workers) or in Redis (the child process).
"""

from __future__ import annotations

import threading
from collections import defaultdict

import redis
from django_tasks import task

#: key -> what the calls under that key did, in order.
CALLS: dict[str, list] = defaultdict(list)
_lock = threading.Lock()


def record(key: str, value: object) -> int:
    """Append ``value`` under ``key``; return how many calls that key has seen."""
    with _lock:
        CALLS[key].append(value)
        return len(CALLS[key])


@task
def add(key: str, a: int, b: int = 0) -> int:
    """Record ``a + b``."""
    record(key, a + b)
    return a + b


@task
def flaky(key: str, failures: int) -> None:
    """Fail the first ``failures`` calls, then succeed."""
    if record(key, "run") <= failures:
        raise RuntimeError(f"failure of {key}")


@task(takes_context=True)
def with_context(context, key: str) -> None:
    """Record the attempt number the context reports; fail the first attempt."""
    record(key, context.attempt)
    if context.attempt < 2:
        raise RuntimeError("first attempt fails")


@task
async def async_add(key: str, a: int, b: int) -> int:
    """Record `a + b` from a coroutine (``supports_async_task``)."""
    record(key, a + b)
    return a + b


def plain_function(key: str) -> None:
    """Not a task: a message naming it must never make the worker call it."""
    record(key, "called")


def retried(key: str) -> None:
    """Record the run and fail (the tests wrap it with ``@task(retry=...)`` at run time)."""
    record(key, "run")
    raise ValueError("always fails")


@task
def remember(url: str, key: str, value: str) -> None:
    """Set ``key`` to ``value`` in Redis (the worker runs in another process)."""
    client = redis.Redis.from_url(url)
    try:
        client.set(key, value, ex=60)
    finally:
        client.close()
