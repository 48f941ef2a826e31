"""Django's ``TASKS`` slot derived from ``TOOLKIT["queue"]``: one documented call in settings.

::

    from toolkit_batteries.queue.jobs import django_task_settings
    TASKS = django_task_settings(TOOLKIT)

gives alias ``default`` -> :class:`~toolkit_batteries.queue.jobs.backend.QueueBackend` on
queue instance ``default`` (and one alias per other configured queue instance, named
after it), so ``@task`` from ``django_tasks`` enqueues onto the toolkit queue and
``manage.py queue_work`` runs it with the toolkit's retry policy.

This module imports neither ``django_tasks`` nor the queue adapters: ``settings.py``
calls it, and settings must load fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "ALIAS_PREFIX",
    "BACKEND_PATH",
    "backend_alias",
    "django_task_settings",
    "task_entry",
]

#: The dotted path Django's ``task_backends`` imports for the toolkit's backend.
BACKEND_PATH = "toolkit_batteries.queue.jobs.backend.QueueBackend"
#: Prefix of the aliases registered at run time when ``TASKS`` names no toolkit backend.
ALIAS_PREFIX = "toolkit_tasks"


def task_entry(queue_instance: str = "default", *, retry: Mapping[str, Any] | None = None):
    """Return the ``TASKS`` entry of a :class:`QueueBackend` on ``queue_instance``.

    ``QUEUES`` is empty: every job queue name is accepted (they are topics
    ``jobs:<name>``, created on first push). ``retry`` is the default retry policy of
    tasks that carry none (the spec's retry keys, as ``@job(retry=...)`` takes them).
    """
    options: dict[str, Any] = {"queue_instance": queue_instance}
    if retry:
        options["retry"] = dict(retry)
    return {"BACKEND": BACKEND_PATH, "QUEUES": [], "OPTIONS": options}


def django_task_settings(
    config: Any = None,
    *,
    queue_instance: str = "default",
    retry: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Return the ``TASKS`` setting ``TOOLKIT["queue"]`` implies (``default`` first).

    ``config`` is a ``TOOLKIT`` mapping (the environment is applied on top, as the
    container does), a loaded :class:`~toolkit_batteries.core.config.Config`, or
    ``None`` for ``settings.TOOLKIT``. Alias ``default`` is the backend on
    ``queue_instance`` (keep it equal to ``TOOLKIT_JOBS["queue_instance"]``); every other
    configured queue instance gets an alias of its own name. ``retry`` is checked now, so
    a bad key fails when settings load, naming the field.
    """
    from toolkit_batteries.core.config import Config

    from .backoff import retry_policy

    if retry is not None:
        retry_policy(retry, where="TASKS retry")
    loaded = Config.of(config)
    instances = loaded.instances("queue")
    if queue_instance not in instances:
        loaded.service("queue", queue_instance)  # raises the unknown-instance error
    tasks = {"default": task_entry(queue_instance, retry=retry)}
    for name in instances:
        if name not in tasks and name != queue_instance:
            tasks[name] = task_entry(name, retry=retry)
    return tasks


def backend_alias(handler: Any, queue_instance: str) -> str:
    """Return the ``task_backends`` alias of the toolkit backend on ``queue_instance``.

    ``default`` wins when it is one; otherwise the first such alias in ``TASKS``; when
    ``TASKS`` has none (it was not derived, or a test overrides ``TOOLKIT`` only), an
    entry is registered at run time through :func:`~toolkit_batteries.core.slots.slot_alias`,
    so ``job.enqueue`` never falls to another backend by accident.
    """
    from toolkit_batteries.core.slots import slot_alias

    configured = handler.settings
    for alias in ("default", *configured):
        entry = configured.get(alias)
        if (
            entry is not None
            and entry.get("BACKEND") == BACKEND_PATH
            and (entry.get("OPTIONS") or {}).get("queue_instance", "default") == queue_instance
        ):
            return alias
    return slot_alias(
        handler, task_entry(queue_instance), preferred=queue_instance, prefix=ALIAS_PREFIX
    )
