"""The step runner, as a job of the queue battery (discovered on every worker).

``manage.py queue_work`` runs it (``--queue <q>`` for a definition on job queue ``q``).
Each call runs one step of one run (``Workflow.advance``). Its own retry policy only
covers the infrastructure (the database unreachable); step failures are counted and
retried by the workflow with the step's policy.
"""

from __future__ import annotations

from toolkit_batteries.queue.jobs.registry import job
from toolkit_batteries.queue.jobs.worker import current_delivery

from .base import ADVANCE_JOB, engine_for

__all__ = ["advance"]


@job(
    name="toolkit.workflow.advance",
    queue="default",
    retry={"max_attempts": 10, "base_delay": "1s", "multiplier": 2, "max_delay": "60s"},
)
def advance(
    instance: str,
    run_id: str,
    engine: str = "",
    workflow: str | None = None,
    current: int | None = None,
    compensating: bool = False,
) -> str:
    """Run the next step of ``run_id`` (a run of ``workflow``) on instance ``instance``.

    ``current`` and ``compensating`` are the position the job was queued for.
    """
    at = None if current is None else (int(current), bool(compensating))
    delivery = current_delivery()
    if delivery is not None and delivery.job != ADVANCE_JOB:
        delivery = None  # called from inside another job: that message is not ours
    return engine_for(instance, engine).advance(run_id, workflow, at, delivery=delivery)
