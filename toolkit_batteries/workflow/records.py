"""The rows every adapter keeps, as plain dataclasses, and what callers read back.

:class:`RunRecord` and :class:`StepRecord` are the storage shape the adapters share
(the ``db`` adapter's models have the same fields); :class:`RunInfo` and
:class:`StepInfo` are what :meth:`Workflow.get` and :meth:`Workflow.list` return.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "ACTIVE",
    "CLAIMABLE",
    "TERMINAL",
    "RunInfo",
    "RunRecord",
    "RunStatus",
    "StepInfo",
    "StepRecord",
]


class RunStatus:
    """The states of a run (strings, stored as they are)."""

    PENDING = "pending"  # created, not yet claimed by a worker
    RUNNING = "running"  # going forward, one step at a time
    WAITING = "waiting"  # parked until signal ``waiting_for`` arrives
    COMPENSATING = "compensating"  # undoing completed steps, last first
    COMPLETED = "completed"  # every step recorded
    FAILED = "failed"  # a step failed for good; completed steps were compensated
    CANCELLED = "cancelled"  # cancelled; completed steps were compensated
    COMPENSATION_FAILED = "compensation_failed"  # a compensation failed for good: look at it

    ALL = (
        PENDING,
        RUNNING,
        WAITING,
        COMPENSATING,
        COMPLETED,
        FAILED,
        CANCELLED,
        COMPENSATION_FAILED,
    )


#: States a worker may claim (when the lease is free or expired and run_after has come).
CLAIMABLE = (RunStatus.PENDING, RunStatus.RUNNING, RunStatus.COMPENSATING)
#: States that still move.
ACTIVE = (*CLAIMABLE, RunStatus.WAITING)
#: States that never change again.
TERMINAL = (
    RunStatus.COMPLETED,
    RunStatus.FAILED,
    RunStatus.CANCELLED,
    RunStatus.COMPENSATION_FAILED,
)


@dataclass
class RunRecord:
    """One run, as stored."""

    id: str
    namespace: str
    workflow: str
    status: str = RunStatus.PENDING
    input: Any = None
    result: Any = None
    error: str = ""
    #: Forward: index of the next step. Compensating: index of the next step to undo.
    current: int = 0
    #: Attempts of the current step (or compensation) so far.
    attempt: int = 0
    waiting_for: str = ""
    cancel_requested: bool = False
    lease_owner: str = ""
    lease_until: float = 0.0
    run_after: float = 0.0
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass
class StepRecord:
    """One step of one run, as stored (written when the step completes or fails)."""

    index: int
    name: str
    status: str  # completed, failed, compensated, compensation_failed
    result: Any = None
    attempts: int = 0
    error: str = ""
    finished_at: float = 0.0
    compensated_at: float = 0.0


def _time(seconds: float) -> datetime | None:
    return datetime.fromtimestamp(seconds, UTC) if seconds else None


@dataclass(frozen=True)
class StepInfo:
    """A recorded step, as :meth:`Workflow.get` reports it."""

    index: int
    name: str
    status: str
    result: Any
    attempts: int
    error: str
    finished_at: datetime | None
    compensated_at: datetime | None

    @classmethod
    def of(cls, record: StepRecord) -> StepInfo:
        return cls(
            record.index,
            record.name,
            record.status,
            record.result,
            record.attempts,
            record.error,
            _time(record.finished_at),
            _time(record.compensated_at),
        )


@dataclass(frozen=True)
class RunInfo:
    """A run, as :meth:`Workflow.get` and :meth:`Workflow.list` report it."""

    id: str
    workflow: str
    namespace: str
    status: str
    input: Any
    result: Any
    error: str
    current: int
    attempt: int
    waiting_for: str
    cancel_requested: bool
    created_at: datetime | None
    updated_at: datetime | None
    steps: tuple[StepInfo, ...] = field(default=())
    signals: tuple[str, ...] = field(default=())

    @property
    def done(self) -> bool:
        """Tell whether the run reached a final state."""
        return self.status in TERMINAL

    @property
    def results(self) -> dict[str, Any]:
        """Return the completed (or compensated) steps' results by step name."""
        return {s.name: s.result for s in self.steps if s.status != "failed"}

    @classmethod
    def of(
        cls,
        record: RunRecord,
        steps: list[StepRecord] | None = None,
        signals: list[str] | None = None,
    ) -> RunInfo:
        return cls(
            record.id,
            record.workflow,
            record.namespace,
            record.status,
            record.input,
            record.result,
            record.error,
            record.current,
            record.attempt,
            record.waiting_for,
            record.cancel_requested,
            _time(record.created_at),
            _time(record.updated_at),
            tuple(StepInfo.of(s) for s in sorted(steps or [], key=lambda s: s.index)),
            tuple(sorted(signals or [])),
        )
