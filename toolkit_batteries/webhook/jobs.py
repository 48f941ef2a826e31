"""The delivery job, for workers of the project's queue (``manage.py queue_work``).

When the ``queue`` adapter borrows the project's ``queue`` service (``queue_adapter`` and
``queue_opts`` unset), its jobs land on topic ``jobs:webhooks`` of that queue and any
``queue_work --queue webhooks`` runs them: the worker imports this module (every
installed app's ``jobs`` module), so the job is known by name. It hands the call to
``services.webhook(instance)`` of the worker's process.
"""

from __future__ import annotations

from typing import Any

from toolkit_batteries.queue.jobs import job

__all__ = ["deliver"]


@job(name="toolkit.webhook.deliver", queue="webhooks")
def deliver(*, instance: str = "default", **call: Any) -> str:
    """Make one attempt of a webhook delivery on this process's webhook instance."""
    from toolkit_batteries import services

    return services.webhook(instance).run_job(**call)
