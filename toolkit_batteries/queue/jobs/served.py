"""Which queues a worker works by default, and which jobs no worker would ever see.

A job names its queue (``@job(queue="emails")``, ``queue: emails`` in the schema). A
worker started without ``--queue`` works ``TOOLKIT_JOBS["queues"]`` when the project
lists them, else "default" and every queue a registered job names, so a new job queue
needs no change to how workers are started. ``toolkit doctor`` warns about a job whose
queue falls outside what the workers serve, and about jobs on the per-process memory
queue, which a separate worker process never sees.
"""

from __future__ import annotations

from collections.abc import Iterable

from .registry import Job, registry
from .settings import JobsSettings

__all__ = ["default_worker_queues", "unserved_job_warnings"]


def default_worker_queues(conf: JobsSettings, jobs: Iterable[Job] | None = None) -> list[str]:
    """Return the queues a worker works when it is given none, in a stable order."""
    if conf.queues:
        return list(dict.fromkeys(conf.queues))
    named = sorted({job.queue for job in (registry if jobs is None else jobs)} - {"default"})
    return ["default", *named]


def unserved_job_warnings(
    conf: JobsSettings, queue_adapter: str, jobs: Iterable[Job] | None = None
) -> list[str]:
    """Return one line per job that a separately started worker would never run."""
    listed = list(registry if jobs is None else jobs)
    warnings: list[str] = []
    if conf.dispatcher == "queue" and queue_adapter == "memory" and listed:
        warnings.append(
            f'{len(listed)} job(s) dispatch onto the memory queue "{conf.queue_instance}": '
            "it lives in one process, so a `toolkit queue:work` process never sees them "
            f"(set QUEUE__{conf.queue_instance.upper()}__ADAPTER=db or kvserver)"
        )
    served = set(default_worker_queues(conf, listed))
    for job in sorted(listed, key=lambda j: j.name):
        if job.queue not in served:
            warnings.append(
                f'job "{job.name}" dispatches onto queue "{job.queue}", which no worker '
                f'serves (TOOLKIT_JOBS["queues"] lists {", ".join(sorted(served))}): add '
                "it there or start `toolkit queue:work --queue "
                f"{job.queue}`"
            )
    return warnings
