"""The ``memory`` adapter: runs in this process's dictionaries (the zero-infrastructure default).

Everything the ``db`` adapter does, minus durability across a restart of the process and
minus transactions: a step's writes elsewhere are not rolled back with its record. Steps
still run as jobs on the queue battery, so a ``queue_work`` thread (or
:class:`~toolkit_batteries.queue.jobs.Worker`) in this process runs them; jobs pushed to
a server queue and run by another process find no runs here. Use it in tests and
single-process tools; use ``db`` anywhere a run must survive.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from toolkit_batteries.core.adapter import OpenContext

from ..base import Workflow
from ..records import CLAIMABLE, TERMINAL, RunRecord, RunStatus, StepRecord
from ..runstate import Expect, Fields

__all__ = ["MemoryWorkflow", "workflow_queue"]


def workflow_queue(ctx: OpenContext) -> Any:
    """Return the queue the step jobs go to: ``TOOLKIT_JOBS["queue_instance"]``'s."""
    from toolkit_batteries.queue.jobs.dispatch import jobs_settings

    return ctx.container.queue(jobs_settings().queue_instance)


def _dump(value: Any) -> Any:
    """Keep JSON values as text, so a caller's later mutation never reaches the store."""
    return None if value is None else json.dumps(value)


def _load_json(text: Any) -> Any:
    return None if text is None else json.loads(text)


def _run_in(run: RunRecord) -> RunRecord:
    return replace(run, input=_dump(run.input), result=_dump(run.result))


def _run_out(run: RunRecord) -> RunRecord:
    return replace(run, input=_load_json(run.input), result=_load_json(run.result))


def _step_out(step: StepRecord) -> StepRecord:
    return replace(step, result=_load_json(step.result))


def _matches(run: RunRecord, expect: Expect) -> bool:
    for key, wanted in (expect or {}).items():
        value = getattr(run, key)
        if isinstance(wanted, tuple) and value not in wanted:
            return False
        if not isinstance(wanted, tuple) and value != wanted:
            return False
    return True


class MemoryWorkflow(Workflow):
    """Runs, steps and signals in dictionaries behind one lock."""

    adapter_name = "memory"

    def __init__(self, queue: Any, *, clock: Callable[[], float] | None = None, **kwargs: Any):
        super().__init__(queue, **({"clock": clock} if clock else {}), **kwargs)
        self._lock = threading.RLock()
        self._runs: dict[str, RunRecord] = {}
        self._step_rows: dict[str, dict[int, StepRecord]] = {}
        self._signal_rows: dict[str, dict[str, Any]] = {}

    @classmethod
    def open(cls, ctx: OpenContext) -> MemoryWorkflow:
        """Build an empty store on the jobs' queue instance."""
        return cls(workflow_queue(ctx), instance=ctx.instance, namespace=ctx.options.namespace)

    def _insert(self, run: RunRecord, then: Any = None) -> bool:
        with self._lock:
            if run.id in self._runs:
                return False
            self._runs[run.id] = _run_in(run)
            return True

    def _load(self, run_id: str) -> RunRecord | None:
        with self._lock:
            run = self._runs.get(run_id)
            return _run_out(run) if run is not None else None

    def _claim(
        self, run_id: str, owner: str, now: float, until: float, at: Any = None
    ) -> RunRecord | None:
        with self._lock:
            run = self._runs.get(run_id)
            if (
                run is None
                or (at is not None and at != (run.current, run.status == RunStatus.COMPENSATING))
                or run.status not in CLAIMABLE
                or run.run_after > now
                or (run.lease_owner and run.lease_until > now)
            ):
                return None
            run.lease_owner, run.lease_until = owner, until
            run.attempt += 1
            if run.status == RunStatus.PENDING:
                run.status = RunStatus.RUNNING
            run.updated_at = now
            return _run_out(run)

    def _update(
        self, run_id: str, changes: Fields, *, owner: str | None = None, expect: Expect = None
    ) -> bool:
        with self._lock:
            run = self._runs.get(run_id)
            if run is None or (owner is not None and run.lease_owner != owner):
                return False
            if not _matches(run, expect):
                return False
            if "result" in changes:
                changes = {**changes, "result": _dump(changes["result"])}
            self._runs[run_id] = replace(run, **changes)
            return True

    def _park(self, run_id: str, owner: str, signal: str, changes: dict[str, Any]) -> bool:
        with self._lock:
            if signal in self._signal_rows.get(run_id, {}):
                return False
            return self._update(run_id, changes, owner=owner)

    def _put_step(self, run_id: str, step: StepRecord) -> None:
        with self._lock:
            stored = replace(step, result=_dump(step.result))
            self._step_rows.setdefault(run_id, {})[step.index] = stored

    def _steps(self, run_id: str) -> list[StepRecord]:
        with self._lock:
            rows = self._step_rows.get(run_id, {})
            return [_step_out(rows[i]) for i in sorted(rows)]

    def _add_signal(self, run_id: str, name: str, payload: Any, now: float) -> bool:
        with self._lock:
            found = self._signal_rows.setdefault(run_id, {})
            if name in found:
                return False
            found[name] = _dump(payload)
            return True

    def _signals(self, run_id: str) -> dict[str, Any]:
        with self._lock:
            rows = self._signal_rows.get(run_id, {})
            return {name: _load_json(text) for name, text in rows.items()}

    def _list(self, workflow: str | None, status: str | None, limit: int) -> list[RunRecord]:
        with self._lock:
            runs = [
                _run_out(run)
                for run in self._runs.values()
                if (workflow is None or run.workflow == workflow)
                and (status is None or run.status == status)
            ]
        runs.sort(key=lambda run: (run.created_at, run.id), reverse=True)
        return runs[:limit]

    def _purge(self, before: float) -> int:
        with self._lock:
            gone = [
                run_id
                for run_id, run in self._runs.items()
                if run.status in TERMINAL and run.updated_at < before
            ]
            for run_id in gone:
                del self._runs[run_id]
                self._step_rows.pop(run_id, None)
                self._signal_rows.pop(run_id, None)
        return len(gone)

    def _claimable(self, now: float, limit: int) -> list[tuple[str, str]]:
        with self._lock:
            found = [
                (run.id, run.workflow)
                for run in self._runs.values()
                if run.status in CLAIMABLE
                and run.run_after <= now
                and (not run.lease_owner or run.lease_until <= now)
            ]
        return found[:limit]
