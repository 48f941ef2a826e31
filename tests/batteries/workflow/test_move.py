"""The storage primitives a step's record uses, on every adapter (issue 27).

``_move`` moves the run on and writes the step's row, both or neither: the ``db`` adapter
does it in one statement on PostgreSQL (a writing CTE), two on SQLite, and the memory
adapter in two calls. ``_update`` is raw SQL on ``db``; what it writes must read back as
the ORM wrote it (JSON results, ``IN`` matches, the lease owner).
"""

from __future__ import annotations

import pytest
from django.db import transaction

from toolkit_batteries.workflow import RunStatus, Step, WorkflowDefinition, register
from toolkit_batteries.workflow.records import StepRecord

from .conftest import open_workflow, unique, workflow_block


def _never(ctx) -> None:  # pragma: no cover - no worker serves the definition's queue
    raise AssertionError("the step must not run")


@pytest.fixture
def claimed(opened):
    """Return a run claimed by owner ``A`` (no worker serves its queue: only the test moves it)."""
    flow = register(
        WorkflowDefinition(unique("mv"), steps=[Step("one", _never)], queue=unique("idle"))
    )
    workflow = opened.workflow
    run_id = workflow.start(flow)
    now = workflow.clock()
    run = workflow._claim(run_id, "A" * 32, now, now + 60)
    assert run is not None and run.status == RunStatus.RUNNING
    return workflow, run


def _step(result) -> StepRecord:
    return StepRecord(0, "one", "completed", result, 1, "", 1_700_000_000.5)


def test_a_move_by_another_owner_writes_neither_the_run_nor_the_step(claimed):
    workflow, run = claimed
    changes = {"current": 1, "status": RunStatus.COMPLETED, "result": {"x": 1}}
    moved = workflow._move(run.id, changes, "B" * 32, {"current": 0}, _step({"x": 1}))
    assert moved is False
    assert workflow._steps(run.id) == []
    after = workflow._load(run.id)
    assert (after.current, after.status, after.result) == (0, RunStatus.RUNNING, None)


def test_a_move_from_a_position_the_run_left_writes_nothing(claimed):
    workflow, run = claimed
    moved = workflow._move(run.id, {"current": 1}, "A" * 32, {"current": 5}, _step(None))
    assert moved is False
    assert workflow._steps(run.id) == []
    assert workflow._load(run.id).current == 0


def test_a_move_by_the_owner_writes_both_and_the_json_reads_back(claimed):
    workflow, run = claimed
    value = {"total": "19.90", "items": [1, "é", None], "ok": True}
    changes = {"current": 1, "status": RunStatus.COMPLETED, "result": value, "error": ""}
    moved = workflow._move(run.id, changes, "A" * 32, {"current": 0}, _step(value))
    assert moved is True
    (step,) = workflow._steps(run.id)
    assert (step.index, step.name, step.status, step.result) == (0, "one", "completed", value)
    assert step.finished_at == 1_700_000_000.5
    after = workflow._load(run.id)
    assert (after.current, after.status, after.result) == (1, RunStatus.COMPLETED, value)
    assert workflow.get(run.id).result == value


def test_update_matches_any_of_a_tuple_and_the_lease_owner(claimed):
    workflow, run = claimed
    running = (RunStatus.PENDING, RunStatus.RUNNING)
    assert not workflow._update(run.id, {"error": "x"}, owner="B" * 32, expect={"status": running})
    assert not workflow._update(
        run.id, {"error": "x"}, owner="A" * 32, expect={"status": (RunStatus.WAITING,)}
    )
    assert workflow._load(run.id).error == ""
    assert workflow._update(run.id, {"error": "y"}, owner="A" * 32, expect={"status": running})
    assert workflow._update(run.id, {"result": None, "cancel_requested": True})
    after = workflow._load(run.id)
    assert (after.error, after.result, after.cancel_requested) == ("y", None, True)


@pytest.fixture(params=("db-sqlite", "db-postgres"))
def db_workflow(request):
    container, workflow, worker = open_workflow(workflow_block(request.param, request))
    yield workflow
    worker.stop()
    worker.join(5)
    workflow._runs.delete()
    container.close()


def test_a_repeated_start_in_the_callers_transaction_leaves_it_usable(db_workflow):
    """The run's insert is ``ON CONFLICT DO NOTHING`` (no savepoint): a taken id must
    neither raise nor abort the caller's transaction, which then commits its own rows."""
    flow = register(
        WorkflowDefinition(unique("mv"), steps=[Step("one", _never)], queue=unique("idle"))
    )
    run_id = unique("run")
    with transaction.atomic(using=db_workflow.using):
        assert db_workflow.start(flow, run_id=run_id) == run_id
        assert db_workflow.start(flow, run_id=run_id) == run_id
        assert db_workflow._insert(db_workflow._load(run_id)) is False
        db_workflow._update(run_id, {"error": "still usable"})
    assert [run.id for run in db_workflow._list(flow.name, None, 10)] == [run_id]
    assert db_workflow._load(run_id).error == "still usable"
