"""The workflow service: durable runs of named steps, one step per queue job.

The runner (:meth:`Workflow.advance`) is what the job ``toolkit.workflow.advance``
calls. For one run it:

1. loads the run and, unless it is finished, parked or leased by a live worker, claims
   it: a lease (``lease_owner``, ``lease_until``) that a crashed worker loses when it
   expires (a conditional ``UPDATE``; on PostgreSQL the row is picked ``FOR NO KEY UPDATE
   SKIP LOCKED``, so a worker never queues behind another's row lock);
2. runs the next step's ``execute`` (after its ``wait_for`` signal arrived) and, in the
   same database transaction on the ``db`` adapter, records its JSON result and moves
   the run to the next step, on condition that this worker still holds the lease. A
   worker that dies before that commit leaves nothing behind: the step's writes roll
   back with it, and another worker runs the step again once the lease expired (the
   queue redelivers the unacknowledged job after its visibility timeout). So a step
   whose effects are rows in the workflow's database takes effect exactly once;
3. pushes the job for the next step (or, on failure, the retry after the resilience
   retry policy's backoff; when the step's attempts are spent, the compensation of the
   completed steps, last first, each one a job of its own too).

Adapters implement a dozen storage primitives (``_insert``, ``_claim``, ``_update``,
...); everything above is written once, here, and in :mod:`.compensation` (the undoing
half, functions of a :class:`Workflow`); :mod:`.runstate` holds what both halves share.
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import time
import uuid
import weakref
from collections.abc import Callable
from contextlib import nullcontext
from contextvars import ContextVar
from datetime import timedelta
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.queue.jobs.dispatch import topic_for
from toolkit_batteries.queue.jobs.payload import encode

from .compensation import begin_compensation, compensate, compensate_cancelled_step
from .definition import (
    StepContext,
    UnknownWorkflowError,
    WorkflowDefinition,
    definition,
    register,
    resolve_callable,
)
from .errors import RunNotFoundError, WorkflowClosedError
from .records import (
    TERMINAL,
    RunInfo,
    RunRecord,
    RunStatus,
    StepRecord,
)
from .runstate import MAX_ERROR as MAX_ERROR
from .runstate import Expect, Fields, Job, _LeaseLost, _reason, _released, max_attempts
from .signals import step_recorded

__all__ = [
    "ADVANCE_JOB",
    "RunNotFoundError",
    "Workflow",
    "WorkflowClosedError",
    "engine_for",
]

logger = logging.getLogger("toolkit.workflow")

#: The job that runs one step of one run (registered by :mod:`.jobs`).
ADVANCE_JOB = "toolkit.workflow.advance"
_ID = re.compile(r"^[A-Za-z0-9_.:\-]{1,64}$")
_SIGNAL = re.compile(r"^[A-Za-z0-9_.:\-]{1,100}$")
#: Longest namespace the ``namespace`` column holds.
MAX_NAMESPACE = 64

#: Where a run stands: (current step index, compensating?). Step jobs carry it.
Position = tuple[int, bool] | None

_engines: weakref.WeakValueDictionary[str, Workflow] = weakref.WeakValueDictionary()
#: Reads a cancel makes while steps keep committing under it, before it answers False.
_CANCEL_ROUNDS = 20
#: The queue delivery the running ``advance`` was called for (the step job's message),
#: until a step's record acknowledges it.
#: Seconds before a step job whose run was free but locked looks again (``busy``).
BUSY_RETRY = 0.05
_delivery: ContextVar[Any] = ContextVar("toolkit_workflow_delivery", default=None)


def engine_for(instance: str, token: str = "") -> Workflow:
    """Return the open workflow service a job names: this process's by token, else settings'."""
    found = _engines.get(token) if token else None
    if found is not None and not found.closed:
        return found
    from toolkit_batteries import services

    return services.container().workflow(instance)


#: The encoder every check shares (``json.dumps`` with an option builds one per call).
_STRICT_JSON = json.JSONEncoder(allow_nan=False)
#: Types whose every value is JSON, checked without encoding (a float may be NaN).
_JSON_SCALARS = frozenset({str, int, bool, type(None)})


def _is_json(value: Any) -> bool:
    """Tell whether ``value`` encodes as strict JSON (no NaN or infinity)."""
    if type(value) in _JSON_SCALARS:
        return True
    try:
        _STRICT_JSON.encode(value)
    except (TypeError, ValueError):
        return False
    return True


def _json(value: Any, what: str) -> None:
    if not _is_json(value):
        raise TypeError(f"workflow: {what} must be a JSON value")


class Workflow(Service):
    """Start, signal, cancel, list and inspect durable runs; run their steps as jobs."""

    service_name: ClassVar[str] = "workflow"
    #: The Django database alias steps write through (``None`` on ``memory``).
    using: str | None = None

    def __init__(
        self,
        queue: Any,
        *,
        instance: str = "default",
        namespace: str = "",
        clock: Callable[[], float] = time.time,
    ) -> None:
        from . import jobs  # noqa: F401  (registers the step-runner job in this process)

        self.queue = queue
        self.instance = instance
        #: Runs are scoped by namespace (the ``namespace`` option, else ``default``).
        self.namespace = str(namespace or "").strip() or "default"
        if len(self.namespace) > MAX_NAMESPACE:
            raise InvalidOptionsError(
                "workflow",
                "namespace",
                f"is longer than {MAX_NAMESPACE} characters (the namespace column)",
                instance=instance,
            )
        self.clock = clock
        self.rng = random.Random()
        self.token = uuid.uuid4().hex
        self.closed = False
        #: The last queue :meth:`_joins` was asked about, and its answer.
        self._joined: tuple[Any, bool] = (None, False)
        _engines[self.token] = self

    # ------------------------------------------------------------------ primitives

    def _insert(self, run: RunRecord, then: Job | None = None) -> bool:
        """Store a new run; ``False`` when the id is taken.

        ``then`` (given only when the queue joins this service's transactions) is the
        first step's job, pushed with the row in the same transaction.
        """
        raise NotImplementedError

    def _load(self, run_id: str) -> RunRecord | None:
        raise NotImplementedError

    def _claim(
        self, run_id: str, owner: str, now: float, until: float, at: Position = None
    ) -> RunRecord | None:
        """Lease a claimable run to ``owner`` (attempt + 1); ``None`` when it is not free.

        ``at`` (``(current, compensating)``) claims only a run still at that position.
        """
        raise NotImplementedError

    def _update(
        self, run_id: str, changes: Fields, *, owner: str | None = None, expect: Expect = None
    ) -> bool:
        """Change a run when ``owner`` holds it and its fields match ``expect`` (tuple: any of)."""
        raise NotImplementedError

    def _park(self, run_id: str, owner: str, signal: str, changes: dict[str, Any]) -> bool:
        """Apply ``changes`` unless signal ``signal`` has arrived (one atomic statement)."""
        raise NotImplementedError

    def _put_step(self, run_id: str, step: StepRecord) -> None:
        raise NotImplementedError

    def _move(
        self, run_id: str, changes: Fields, owner: str, expect: Fields, step: StepRecord, *more: Any
    ) -> bool:
        """``_update`` and, when it applied, ``_put_step``: a step's record (in a transaction).

        ``more`` (only when the queue joins the transaction) is ``(then, delivery)``: the
        next job to push and the worker's delivery to acknowledge (each or ``None``), both
        only when the move applied. The move is the last write of its transaction. ``db``
        on PostgreSQL does it all in one statement; ``False`` (nothing written) as ``_update``.
        """
        if not self._update(run_id, changes, owner=owner, expect=expect):
            return False
        self._put_step(run_id, step)
        then, delivery = more or (None, None)
        if then is not None:
            self.queue.push(*then)
        if delivery is not None and delivery.queue.ack(delivery.message):
            self._after_commit(delivery.mark_acked)
        return True

    def _steps(self, run_id: str) -> list[StepRecord]:
        raise NotImplementedError

    def _add_signal(self, run_id: str, name: str, payload: Any, now: float) -> bool:
        """Record a signal; ``False`` when the run already had one of that name."""
        raise NotImplementedError

    def _signals(self, run_id: str) -> dict[str, Any]:
        raise NotImplementedError

    def _list(self, workflow: str | None, status: str | None, limit: int) -> list[RunRecord]:
        raise NotImplementedError

    def _claimable(self, now: float, limit: int) -> list[tuple[str, str]]:
        """Return (id, workflow) of runs a worker could claim now."""
        raise NotImplementedError

    def _purge(self, before: float) -> int:
        """Delete finished runs last updated before ``before``; return how many."""
        raise NotImplementedError

    def _atomic(self) -> Any:
        """Return a context manager making its writes one transaction (db) or nothing."""
        return nullcontext()

    def _after_commit(self, action: Callable[[], Any]) -> None:
        """Run ``action`` once the caller's transaction commits (at once outside one)."""
        action()

    # ------------------------------------------------------------------ public API

    def _check_open(self) -> None:
        if self.closed:
            raise WorkflowClosedError(self.instance)

    @staticmethod
    def _definition(workflow: WorkflowDefinition | str) -> WorkflowDefinition:
        if isinstance(workflow, WorkflowDefinition):
            return register(workflow)
        return definition(workflow)

    def start(
        self, workflow: WorkflowDefinition | str, input: Any = None, *, run_id: str | None = None
    ) -> str:
        """Create a run of ``workflow`` and queue its first step; return the run id.

        Starting with a ``run_id`` that exists (same workflow) returns it without a second
        run, so a start can be retried. On ``db`` the run row joins the caller's
        transaction and its first job is pushed when that transaction commits (with the
        ``db`` queue on the same database, in that transaction: both or neither).
        """
        self._check_open()
        found = self._definition(workflow)
        _json(input, "input")
        if run_id is None:
            run_id = uuid.uuid4().hex
        elif not isinstance(run_id, str) or not _ID.match(run_id):
            raise ValueError('workflow: a run id is 1 to 64 letters, digits, "_", ".", ":" or "-"')
        now = self.clock()
        record = RunRecord(
            run_id, self.namespace, found.name, input=input, created_at=now, updated_at=now
        )
        job = self._job(found, run_id, (0, False))
        joins = self._joins(self.queue)
        if self._insert(record, job if joins else None):
            if not joins:
                self._after_commit(lambda: self.queue.push(*job))
            return run_id
        existing = self._load(run_id)
        if existing is None or existing.workflow != found.name:
            raise ValueError(f"workflow.{self.instance}: that run id belongs to another workflow")
        return run_id

    def signal(self, run_id: str, name: str, payload: Any = None) -> bool:
        """Deliver signal ``name`` to a run; ``False`` if it had one already or is finished.

        A step with ``wait_for=name`` parked on it is queued again; a signal that comes
        first is kept until the step gets there.
        """
        self._check_open()
        if not isinstance(name, str) or not _SIGNAL.match(name):
            raise ValueError("workflow: a signal name is 1 to 100 letters, digits or _.:-")
        _json(payload, "a signal payload")
        run = self._require(run_id)
        if run.status in TERMINAL:
            return False
        now = self.clock()
        added = self._add_signal(run_id, name, payload, now)
        woken = self._update(
            run_id,
            {"status": RunStatus.RUNNING, "waiting_for": "", "updated_at": now},
            expect={"status": RunStatus.WAITING, "waiting_for": name},
        )
        if woken:
            self._dispatch(definition(run.workflow), run_id, at=(run.current, False))
        return added

    def cancel(self, run_id: str) -> bool:
        """Ask a run to stop and compensate what it completed; ``False`` when it cannot.

        ``True`` is a promise: the run ends ``cancelled`` with every completed step
        compensated. A finished run, a run already compensating, and a run whose pivot
        step committed cannot be cancelled (``False``). A step in progress finishes
        first; its commit sees the request (the request is written only while the run
        is still at the position read here), so a cancelled pivot or last step is
        recorded and then compensated with the others, never completed past the cancel.
        """
        self._check_open()
        for _ in range(_CANCEL_ROUNDS):
            run = self._require(run_id)
            if run.status in TERMINAL or run.status == RunStatus.COMPENSATING:
                return False
            found = definition(run.workflow)
            if found.past_pivot(run.current):
                return False
            now = self.clock()
            forward = (RunStatus.PENDING, RunStatus.RUNNING, RunStatus.WAITING)
            # Conditional on the position: a step committing meanwhile (maybe the pivot
            # or the last one) makes this write miss, and the next round reads anew.
            if self._update(
                run_id,
                {"cancel_requested": True, "updated_at": now},
                expect={"status": forward, "current": run.current},
            ):
                break
        else:
            return False
        self._update(
            run_id,
            {"status": RunStatus.RUNNING, "waiting_for": "", "updated_at": now},
            expect={"status": RunStatus.WAITING},
        )
        self._dispatch(found, run_id, at=(run.current, False))
        return True

    def resume(self, run_id: str) -> bool:
        """Run a ``failed`` run past its pivot (or a ``compensation_failed`` one) again.

        The failed step (or compensation) starts over with a fresh attempt count.
        """
        self._check_open()
        run = self._require(run_id)
        found = definition(run.workflow)
        now = self.clock()
        if run.status == RunStatus.FAILED and found.past_pivot(run.current):
            status = RunStatus.RUNNING
        elif run.status == RunStatus.COMPENSATION_FAILED:
            status = RunStatus.COMPENSATING
        else:
            return False
        changes = _released(now, status=status, attempt=0, error="", run_after=0.0)
        if not self._update(run_id, changes, expect={"status": run.status}):
            return False
        self._dispatch(found, run_id, at=(run.current, status == RunStatus.COMPENSATING))
        return True

    def get(self, run_id: str) -> RunInfo:
        """Return a run with its recorded steps and the names of its signals."""
        self._check_open()
        run = self._require(run_id)
        return RunInfo.of(run, self._steps(run_id), list(self._signals(run_id)))

    def list(
        self, *, workflow: str | None = None, status: str | None = None, limit: int = 100
    ) -> list[RunInfo]:
        """Return runs of this namespace, newest first (steps not included)."""
        self._check_open()
        if status is not None and status not in RunStatus.ALL:
            raise ValueError(f"workflow: unknown status; use one of {', '.join(RunStatus.ALL)}")
        if limit < 1:
            raise ValueError("workflow: limit must be at least 1")
        return [RunInfo.of(run) for run in self._list(workflow, status, min(limit, 10_000))]

    def wait(self, run_id: str, timeout: float = 30.0, interval: float = 0.02) -> RunInfo:
        """Poll until the run is finished; ``TimeoutError`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            info = self.get(run_id)
            if info.done:
                return info
            if time.monotonic() >= deadline:
                raise TimeoutError(f"workflow.{self.instance}: run still {info.status}")
            time.sleep(interval)

    def recover(self, limit: int = 1000) -> int:
        """Queue a step job for every run a worker could claim now; return how many.

        Crashed workers need no sweep (the queue redelivers their jobs); this covers
        jobs that were lost (a memory queue's process restarted, a dead-lettered job).
        """
        self._check_open()
        count = 0
        for run_id, name in self._claimable(self.clock(), limit):
            try:
                self._dispatch(definition(name), run_id)
            except UnknownWorkflowError:
                continue
            count += 1
        return count

    def purge(self, older_than: float | timedelta) -> int:
        """Delete finished runs (with their steps and signals) idle for ``older_than``.

        Only ``completed``, ``failed``, ``cancelled`` and ``compensation_failed`` runs go;
        ``older_than`` is seconds or a ``timedelta``. Return how many runs were deleted.
        """
        self._check_open()
        seconds = older_than.total_seconds() if isinstance(older_than, timedelta) else older_than
        if seconds < 0:
            raise ValueError("workflow: older_than must not be negative")
        return self._purge(self.clock() - float(seconds))

    def _require(self, run_id: str) -> RunRecord:
        run = self._load(run_id) if isinstance(run_id, str) and _ID.match(run_id) else None
        if run is None:
            raise RunNotFoundError(self.instance)
        return run

    def _dispatch(
        self, found: WorkflowDefinition, run_id: str, delay: float = 0.0, *, at: Position = None
    ) -> None:
        """Queue a step job; ``at`` ties it to one position, so a stale copy does nothing."""
        topic, body = self._job(found, run_id, at)
        self.queue.push(topic, body, delay=delay if delay > 0 else None)

    def _job(self, found: WorkflowDefinition, run_id: str, at: Position) -> Job:
        """Return the topic and body of the step job for ``run_id`` at ``at``."""
        args: list[Any] = [self.instance, run_id, self.token, found.name]
        if at is not None:
            args += [at[0], at[1]]
        return topic_for(found.queue), encode(ADVANCE_JOB, args)

    # ------------------------------------------------------------------ the runner

    def advance(
        self, run_id: str, workflow: str | None = None, at: Position = None, *, delivery: Any = None
    ) -> str:
        """Run the next step (or compensation) of ``run_id``; return what happened.

        The outcomes: ``step`` (one step recorded, the next queued), ``completed``,
        ``waiting`` (parked for a signal), ``retried``, ``compensating``,
        ``compensated`` (one step undone), a final status, or ``done`` / ``missing`` /
        ``leased`` / ``deferred`` / ``busy`` / ``lost`` / ``stale`` when there was nothing
        to run here. ``at`` (``(current, compensating)``, which the jobs carry) makes a job
        queued for a position the run has left (a redelivered or duplicated job) a no-op,
        so one run never has two chains of jobs.

        ``delivery`` (the step job passes the worker's
        :class:`~toolkit_batteries.queue.jobs.worker.Delivery`) is the message this call
        runs for: when the queue shares the workflow's database, the step's record
        acknowledges it in the same transaction (the worker then sends no ack).
        """
        token = _delivery.set(delivery)
        try:
            return self._advance(run_id, workflow, at)
        finally:
            _delivery.reset(token)

    def _advance(self, run_id: str, workflow: str | None, at: Position) -> str:
        self._check_open()
        now = self.clock()
        owner = os.urandom(16).hex()  # a lease token: 32 random hex digits, as a uuid4's
        claimed = None
        if workflow is not None:  # the job names it: try the claim first, one round trip
            found = definition(workflow)
            claimed = self._claim(run_id, owner, now, now + found.lease, at)
        if claimed is None:
            run = self._load(run_id)
            if run is None:
                return "missing"
            if run.status in TERMINAL:
                return "done"
            if run.status == RunStatus.WAITING:
                return "waiting"
            if at is not None and at != (run.current, run.status == RunStatus.COMPENSATING):
                return "stale"
            found = definition(run.workflow)
            if run.run_after > now:
                self._dispatch(found, run_id, run.run_after - now, at=at)
                return "deferred"
            if run.lease_owner and run.lease_until > now:
                # Its worker lives, or has died and its lease runs out: look again then.
                self._dispatch(found, run_id, run.lease_until - now + 0.05, at=at)
                return "leased"
            claimed = self._claim(run_id, owner, now, now + found.lease, at)
            if claimed is None:
                # Free, due and at this position, yet not claimable: its row is locked
                # (another worker's claim in flight, or a transaction holding a key lock:
                # a signal's insert checks its foreign key so). Look again shortly, at
                # the position read, so a claim that did win makes this job stale
                # instead of starting a second chain. Dropping it stranded the run.
                position = (run.current, run.status == RunStatus.COMPENSATING)
                self._dispatch(found, run_id, BUSY_RETRY, at=position)
                return "busy"
        owner = claimed.lease_owner  # drawn here, or by the pop that claimed the run
        if claimed.workflow != found.name:
            found = definition(claimed.workflow)
        if claimed.status == RunStatus.COMPENSATING:
            return compensate(self, found, claimed, owner)
        if claimed.cancel_requested:
            if not found.past_pivot(claimed.current):
                return begin_compensation(self, found, claimed, owner, "cancelled")
            # Unreachable since the pivot's commit honours a request (see _record); a
            # request stored by an older release past the pivot is dropped, as it was.
            self._update(run_id, {"cancel_requested": False}, owner=owner)
        return self._forward(found, claimed, owner)

    def _context(
        self, found: WorkflowDefinition, run: RunRecord, owner: str, step: str, **extra: Any
    ) -> StepContext:
        def heartbeat() -> bool:
            until = self.clock() + found.lease
            return self._update(run.id, {"lease_until": until}, owner=owner)

        # run_id, workflow, step, attempt, input, instance, using: by position (every step)
        return StepContext(
            run.id,
            run.workflow,
            step,
            run.attempt,
            run.input,
            self.instance,
            self.using,
            _heartbeat=heartbeat,
            **extra,
        )

    def _forward(self, found: WorkflowDefinition, run: RunRecord, owner: str) -> str:
        steps = found.steps
        if run.current >= len(steps):  # recorded the last step but not the status: finish
            now = self.clock()
            self._update(run.id, _released(now, status=RunStatus.COMPLETED), owner=owner)
            return RunStatus.COMPLETED
        step = steps[run.current]
        if run.attempt > max_attempts(step.policy):
            return self._give_up(found, run, owner, f"its worker was lost {run.attempt - 1} times")
        signals: Any = lambda: self._signals(run.id)  # noqa: E731  (read on first use)
        if step.wait_for:
            signals = self._signals(run.id)
            if step.wait_for not in signals:
                now = self.clock()
                parked = _released(
                    now, status=RunStatus.WAITING, waiting_for=step.wait_for, attempt=0
                )
                if self._park(run.id, owner, step.wait_for, parked):
                    return "waiting"
                signals = self._signals(run.id)
        ctx = self._context(found, run, owner, step.name)
        ctx._signals = signals
        ctx._results = lambda: self._results(run.id)
        last = run.current + 1 == len(steps)
        try:
            with self._atomic() if step.atomic else nullcontext():
                if step.execute is not None:
                    value = resolve_callable(step.execute)(ctx)
                else:
                    value = ctx.signals.get(step.wait_for)
                if not _is_json(value):  # the message is only built when it is needed
                    what = f'the result of step "{step.name}"'
                    raise TypeError(f"workflow: {what} must be a JSON value")
                now = self.clock()
                changes = _released(
                    now, current=run.current + 1, attempt=0, error="", run_after=0.0
                )
                changes["status"] = RunStatus.COMPLETED if last else RunStatus.RUNNING
                if last:
                    changes["result"] = value
                record = StepRecord(
                    run.current, step.name, "completed", value, run.attempt, "", now
                )
                # Up to and including the pivot (the last step, without one), a cancel
                # may have been promised: the commit honours it instead of moving on.
                cancellable = not found.past_pivot(run.current)
                cancelled, queued = self._record(
                    run, owner, changes, record, None if last else found, cancellable=cancellable
                )
        except _LeaseLost:
            logger.warning("workflow.%s: lost the lease of a run during a step", self.instance)
            return "lost"
        except Exception as exc:
            return self._failed(found, run, owner, exc)
        self._recorded(run, step.name, run.current, compensating=False)
        if cancelled:
            if not queued:
                self._dispatch(found, run.id, at=(run.current, True))
            return "compensating"
        if last:
            return RunStatus.COMPLETED
        if not queued:
            self._dispatch(found, run.id, at=(run.current + 1, False))
        return "step"

    def _results(self, run_id: str) -> dict[str, Any]:
        return {s.name: s.result for s in self._steps(run_id) if s.status == "completed"}

    def _record(
        self,
        run: RunRecord,
        owner: str,
        changes: dict[str, Any],
        step: StepRecord,
        then: WorkflowDefinition | None = None,
        *,
        compensating: bool = False,
        cancellable: bool = False,
    ) -> tuple[bool, bool]:
        """Move the run on and write the step's record, both or neither.

        With ``then``, the next step's job is pushed in the same transaction when the
        queue writes through the same database connection (the ``db`` queue on the
        workflow's alias), and the job's own message is acknowledged in it: record, next
        job and ack commit together (or none of them). With ``cancellable``,
        the move is conditional on no cancel having been requested; when one was, the
        step is recorded and the run starts compensating from it instead (so a cancel
        that answered ``True`` during the pivot or the last step is kept). Return
        ``(cancelled, queued)``: whether the cancel won, and whether the job that comes
        next (the next step's, or the compensation's) was pushed in the transaction.
        """
        expect: Fields = {"current": run.current}
        if cancellable:
            expect["cancel_requested"] = False
        joins = self._joins(self.queue)
        more: tuple[Any, ...] = ()
        if joins:
            at = (changes["current"], compensating)
            delivery = _delivery.get()
            _delivery.set(None)  # one ack per delivery, and only of this queue's message
            job = None if then is None else self._job(then, run.id, at)
            more = (job, delivery if delivery and self._joins(delivery.queue) else None)
        with self._atomic():
            if self._move(run.id, changes, owner, expect, step, *more):
                return False, then is not None and joins
            if not (cancellable and compensate_cancelled_step(self, run, owner)):
                raise _LeaseLost
            self._put_step(run.id, step)
            if joins:
                self._dispatch(then or definition(run.workflow), run.id, at=(run.current, True))
        return True, joins

    def _joins(self, queue: Any) -> bool:
        """Tell whether ``queue``'s writes join this service's transactions (same alias).

        Asked twice a step, nearly always of ``self.queue``: the last answer is kept
        (a queue's database and this service's alias are fixed once they are open).
        """
        known, answer = self._joined
        if queue is known:
            return answer
        database = getattr(queue, "database", None)
        answer = self.using is not None and getattr(database, "alias", None) == self.using
        self._joined = (queue, answer)
        return answer

    def _recorded(self, run: RunRecord, step: str, index: int, *, compensating: bool) -> None:
        if not step_recorded.receivers:  # nobody listens: skip building the arguments
            return
        step_recorded.send(
            type(self),
            instance=self.instance,
            run_id=run.id,
            workflow=run.workflow,
            step=step,
            index=index,
            compensating=compensating,
        )

    def _retry(
        self, found: WorkflowDefinition, run: RunRecord, owner: str, policy: Any, reason: str
    ) -> bool:
        """Schedule another attempt when the policy allows one; ``True`` when it did."""
        if run.attempt >= max_attempts(policy):
            return False
        from toolkit_batteries.resilience.backoff import backoff

        delay = backoff(run.attempt, policy, self.rng)
        now = self.clock()
        changes = _released(now, error=reason, run_after=now + delay)
        if self._update(run.id, changes, owner=owner, expect={"current": run.current}):
            at = (run.current, run.status == RunStatus.COMPENSATING)
            self._dispatch(found, run.id, delay, at=at)
        return True

    def _failed(self, found: WorkflowDefinition, run: RunRecord, owner: str, exc: Exception) -> str:
        reason = _reason(exc)
        step = found.steps[run.current]
        if self._retry(found, run, owner, step.policy, reason):
            logger.warning(
                "workflow.%s: step %s failed (attempt %d), retrying: %s",
                self.instance,
                step.name,
                run.attempt,
                reason,
            )
            return "retried"
        return self._give_up(found, run, owner, reason)

    def _give_up(self, found: WorkflowDefinition, run: RunRecord, owner: str, reason: str) -> str:
        step = found.steps[run.current]
        now = self.clock()
        logger.error("workflow.%s: step %s failed for good: %s", self.instance, step.name, reason)
        failed = StepRecord(run.current, step.name, "failed", None, run.attempt, reason, now)
        with self._atomic():
            self._put_step(run.id, failed)
            if found.past_pivot(run.current):
                # Past the point of no return: nothing is undone; fix the cause, resume().
                changes = _released(now, status=RunStatus.FAILED, error=reason)
                self._update(run.id, changes, owner=owner)
                return RunStatus.FAILED
            return begin_compensation(self, found, run, owner, reason)

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Stop accepting calls; the queue and database belong to the container."""
        self.closed = True
        _engines.pop(self.token, None)

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<{type(self).__name__} workflow.{self.instance} {self.adapter_name} {state}>"
