"""Compensation: undoing a failed or cancelled run's completed steps, last first.

:class:`~.base.Workflow` runs steps forward (see :mod:`.base`); when a step's attempts
are spent before the pivot, or a run is cancelled, the run turns ``compensating`` and each
completed step's ``compensate`` runs as a job of its own, recorded in the same transaction
as the move to the step before it. This module holds that half of the runner, as
functions of the engine, so each half reads alone; they use the engine's storage
primitives and the forward runner's ``_context``, ``_record``, ``_retry`` and ``_dispatch``.
"""

from __future__ import annotations

import logging
from contextlib import nullcontext
from typing import TYPE_CHECKING

from .definition import WorkflowDefinition, resolve_callable
from .records import RunRecord, RunStatus, StepRecord
from .runstate import _LeaseLost, _reason, _released, max_attempts

if TYPE_CHECKING:
    from .base import Workflow

__all__ = ["begin_compensation", "compensate", "compensate_cancelled_step"]

logger = logging.getLogger("toolkit.workflow")

#: Step records a compensation still has to undo: completed ones, and ones whose
#: compensation failed for good (``resume()`` retries those).
_TO_UNDO = ("completed", "compensation_failed")


def compensate_cancelled_step(engine: Workflow, run: RunRecord, owner: str) -> bool:
    """Turn the commit of a step whose run was cancelled meanwhile into compensation.

    The step did its work, so it is recorded ``completed`` and is the first one
    undone; ``False`` when this worker lost the run (or nobody cancelled it).
    """
    now = engine.clock()
    changes = _released(
        now, status=RunStatus.COMPENSATING, attempt=0, error="cancelled", run_after=0.0
    )
    expect = {"current": run.current, "cancel_requested": True}
    return engine._update(run.id, changes, owner=owner, expect=expect)


def begin_compensation(
    engine: Workflow, found: WorkflowDefinition, run: RunRecord, owner: str, reason: str
) -> str:
    """Turn a run that gave up into ``compensating`` from the step before the failed one."""
    now = engine.clock()
    if run.current == 0:
        final = RunStatus.CANCELLED if run.cancel_requested else RunStatus.FAILED
        engine._update(run.id, _released(now, status=final, error=reason), owner=owner)
        return final
    changes = _released(
        now,
        status=RunStatus.COMPENSATING,
        current=run.current - 1,
        attempt=0,
        error=reason,
        run_after=0.0,
    )
    if engine._update(run.id, changes, owner=owner):
        engine._dispatch(found, run.id, at=(run.current - 1, True))
    return "compensating"


def compensate(engine: Workflow, found: WorkflowDefinition, run: RunRecord, owner: str) -> str:
    """Undo the last step still to undo at or before ``run.current``; one per job."""
    records = {s.index: s for s in engine._steps(run.id)}
    index = run.current
    while index >= 0 and not (
        found.steps[index].compensate is not None
        and records.get(index) is not None
        and records[index].status in _TO_UNDO
    ):
        index -= 1
    now = engine.clock()
    if index < 0:
        final = RunStatus.CANCELLED if run.cancel_requested else RunStatus.FAILED
        engine._update(run.id, _released(now, status=final, current=0), owner=owner)
        return final
    step, record = found.steps[index], records[index]
    if run.attempt > max_attempts(step.policy):
        return _compensation_failed(engine, run, owner, record, "its worker was lost")
    ctx = engine._context(
        found, run, owner, step.name, result=record.result, error=run.error, compensating=True
    )
    ctx._results = {i.name: i.result for i in records.values() if i.status in _TO_UNDO}
    ctx._signals = lambda: engine._signals(run.id)
    done = StepRecord(
        index,
        step.name,
        "compensated",
        record.result,
        record.attempts,
        "",
        record.finished_at,
        now,
    )
    changes = _released(now, current=index - 1, attempt=0, run_after=0.0)
    try:
        with engine._atomic() if step.atomic else nullcontext():
            resolve_callable(step.compensate)(ctx)  # type: ignore[arg-type]
            done.compensated_at = engine.clock()
            _, queued = engine._record(run, owner, changes, done, found, compensating=True)
    except _LeaseLost:
        return "lost"
    except Exception as exc:
        reason = _reason(exc)
        if engine._retry(found, run, owner, step.policy, run.error):
            logger.warning(
                "workflow.%s: compensation of %s failed, retrying: %s",
                engine.instance,
                step.name,
                reason,
            )
            return "retried"
        return _compensation_failed(engine, run, owner, record, reason)
    engine._recorded(run, step.name, index, compensating=True)
    if not queued:
        engine._dispatch(found, run.id, at=(index - 1, True))
    return "compensated"


def _compensation_failed(
    engine: Workflow, run: RunRecord, owner: str, record: StepRecord, reason: str
) -> str:
    now = engine.clock()
    logger.error(
        "workflow.%s: compensation of step %s failed for good: %s",
        engine.instance,
        record.name,
        reason,
    )
    with engine._atomic():
        failed = StepRecord(
            record.index,
            record.name,
            "compensation_failed",
            record.result,
            record.attempts,
            reason,
            record.finished_at,
        )
        engine._put_step(run.id, failed)
        changes = _released(now, status=RunStatus.COMPENSATION_FAILED, error=reason)
        engine._update(run.id, changes, owner=owner)
    return RunStatus.COMPENSATION_FAILED
