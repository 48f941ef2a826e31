"""The storage primitives a step's record uses, on every adapter (issue 27).

``_move`` moves the run on and writes the step's row, both or neither: the ``db`` adapter
does it in one statement on PostgreSQL (a writing CTE), two on SQLite, and the memory
adapter in two calls. ``_update`` is raw SQL on ``db``; what it writes must read back as
the ORM wrote it (JSON results, ``IN`` matches, the lease owner).
"""

from __future__ import annotations

import pytest
from django.db import transaction

from toolkit_batteries.queue.jobs.worker import Delivery, Worker
from toolkit_batteries.workflow import RunStatus, Step, WorkflowDefinition, register
from toolkit_batteries.workflow.base import ADVANCE_JOB
from toolkit_batteries.workflow.records import StepRecord

from ...support.libpq_trace import sent_messages
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


@pytest.fixture(params=("db-sqlite-dbqueue", "db-postgres-dbqueue"))
def joined(request):
    """Yield a db workflow whose queue is the ``db`` queue on the same database."""
    block = workflow_block(request.param, request)
    container, workflow, worker = open_workflow(block, db_queue=True)
    worker.stop()  # only the test moves runs and pops messages here
    worker.join(5)
    yield workflow, container.queue()
    workflow._runs.delete()
    container.close()


def _delivered(queue, topic: str) -> Delivery:
    queue.push(topic, b"the step's own job")
    return Delivery(queue, queue.pop(topic, timeout=0), ADVANCE_JOB)


@pytest.mark.parametrize("owner", ["A" * 32, "B" * 32])
def test_a_move_carries_the_next_job_and_the_ack_or_neither(joined, owner):
    """Record, next job and ack commit together: a move that applies pushes the next
    job and deletes the step's own message; one that does not (another owner) neither."""
    workflow, queue = joined
    flow = register(
        WorkflowDefinition(unique("mv"), steps=[Step("one", _never)], queue=unique("idle"))
    )
    run_id = workflow.start(flow)
    assert queue.size(f"jobs:{flow.queue}") == 1  # the first job, pushed with the row
    now = workflow.clock()
    run = workflow._claim(run_id, "A" * 32, now, now + 60)
    delivery = _delivered(queue, "jobs:own")
    nxt = (f"jobs:{unique('next')}", b"the next job")
    more = (nxt, delivery)
    with workflow._atomic():
        moved = workflow._move(run.id, {"current": 1}, owner, {"current": 0}, _step(1), *more)
    applies = owner == "A" * 32
    assert moved is applies
    assert queue.size(nxt[0]) == int(applies)
    assert delivery.acked is applies
    assert queue.ack(delivery.message) is not applies  # gone, or still leased to us
    assert workflow._load(run_id).current == int(applies)


def test_a_start_in_a_rolled_back_transaction_leaves_no_run_and_no_job(joined):
    workflow, queue = joined
    flow = register(
        WorkflowDefinition(unique("mv"), steps=[Step("one", _never)], queue=unique("idle"))
    )
    run_id = unique("run")
    with pytest.raises(RuntimeError), transaction.atomic(using=workflow.using):
        workflow.start(flow, run_id=run_id)
        assert queue.size(f"jobs:{flow.queue}") == 1  # in the caller's transaction
        raise RuntimeError
    assert workflow._load(run_id) is None
    assert queue.size(f"jobs:{flow.queue}") == 0


def _record(ctx) -> int:
    return ctx.attempt


def test_steps_on_the_db_queue_are_acknowledged_by_their_own_records(request):
    """On PostgreSQL each step's record deletes its job's message in the same statement:
    the worker sends no ack of its own, and nothing is left on the queue."""
    block = workflow_block("db-postgres-dbqueue", request)
    container, workflow, worker = open_workflow(block, db_queue=True)
    queue = container.queue()
    acks: list[str] = []
    settle = queue.ack
    queue.ack = lambda message: acks.append(message.id) or settle(message)
    try:
        flow = register(
            WorkflowDefinition(unique("mv"), steps=[Step(f"s{i}", _record) for i in range(3)])
        )
        run_id = workflow.start(flow)
        info = workflow.wait(run_id, timeout=30)
        assert info.status == RunStatus.COMPLETED
        assert [step.result for step in info.steps] == [1, 1, 1]
        worker.stop()
        assert worker.join(10)  # the last step's job is settled too
        assert acks == []
        assert worker.stats.succeeded == 3 and worker.stats.lost_leases == 0
        assert queue.size("jobs:default") == 0
    finally:
        worker.stop()
        worker.join(5)
        workflow._runs.delete()
        container.close()


def _commands(workflow, block) -> list[str]:
    """Run ``block()`` with libpq tracing this thread's connection; return its simple queries."""
    sent = sent_messages(workflow.database.django_connection, block)
    return [text for kind, text in sent if kind == "Query"]


@pytest.fixture
def joined_postgres(request):
    block = workflow_block("db-postgres-dbqueue", request)
    container, workflow, worker = open_workflow(block, db_queue=True)
    worker.stop()
    worker.join(5)
    flow = register(
        WorkflowDefinition(unique("mv"), steps=[Step("one", _never)], queue=unique("idle"))
    )
    run_id = workflow.start(flow)
    now = workflow.clock()
    yield workflow, workflow._claim(run_id, "A" * 32, now, now + 60)
    workflow._runs.delete()
    container.close()


def test_a_record_alone_in_its_transaction_commits_without_begin_and_commit(joined_postgres):
    workflow, run = joined_postgres

    def record() -> None:
        with workflow._atomic():
            assert workflow._move(run.id, {"current": 1}, "A" * 32, {"current": 0}, _step(1))

    assert _commands(workflow, record) == []  # one prepared statement, committed alone
    assert workflow._load(run.id).current == 1


def test_a_record_after_other_statements_stays_in_their_transaction(joined_postgres):
    """A step that wrote through the workflow's alias keeps one transaction: its writes
    and its record roll back together."""
    workflow, run = joined_postgres

    def record() -> None:
        with pytest.raises(RuntimeError), workflow._atomic():
            workflow._update(run.id, {"error": "written by the step"})
            assert workflow._move(run.id, {"current": 1}, "A" * 32, {"current": 0}, _step(1))
            raise RuntimeError

    kinds = [command.split()[0].strip('"') for command in _commands(workflow, record)]
    assert kinds[0] == "BEGIN" and "ROLLBACK" in kinds and "COMMIT" not in kinds
    after = workflow._load(run.id)
    assert (after.current, after.error) == (0, "")
    assert workflow._steps(run.id) == []


def test_a_step_looks_its_connection_up_once(request, monkeypatch):
    """Issue 27: the claim, the step's block, the record and its commit hooks share one
    lookup of the workflow's connection (each goes through asgiref's context-local
    storage), kept for that step only."""
    block = workflow_block("db-postgres-dbqueue", request)
    container, workflow, worker = open_workflow(block, db_queue=True)
    worker.stop()  # this test hands the step's message to a worker of its own
    worker.join(5)
    try:
        flow = register(
            WorkflowDefinition(
                unique("mv"), steps=[Step("one", _record), Step("two", _record)], queue=unique("q")
            )
        )
        run_id = workflow.start(flow)
        queue = container.queue()
        message = queue.pop(f"jobs:{flow.queue}", timeout=0)
        lookups: list[int] = []
        database = type(workflow.database)
        looked_up = database.django_connection.fget
        counted = property(lambda db: lookups.append(1) or looked_up(db))
        monkeypatch.setattr(database, "django_connection", counted)
        assert Worker(queue, queues=(flow.queue,)).handle(message) == "succeeded"
        assert len(lookups) == 1
        assert workflow._scope.conn is None  # not kept past the step
        monkeypatch.undo()
        info = workflow.get(run_id)
        assert (info.current, [step.result for step in info.steps]) == (1, [1])
        assert queue.size(f"jobs:{flow.queue}") == 1  # the next step's job, and no other
    finally:
        workflow._runs.delete()
        container.close()
