"""The workflow contract, on every adapter: memory, db on SQLite, db on PostgreSQL."""

from __future__ import annotations

import logging
import threading
import time
import uuid

import pytest

from toolkit_batteries.workflow import (
    DefinitionError,
    RunNotFoundError,
    RunStatus,
    Step,
    StepContext,
    UnknownWorkflowError,
    WorkflowDefinition,
    register,
    step_function,
)
from toolkit_batteries.workflow.definition import definition

NO_DELAY = {"max_attempts": 1}


def name(prefix: str = "wf") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


class Journal:
    """What steps did, in order, across threads."""

    def __init__(self) -> None:
        self.entries: list[str] = []
        self.lock = threading.Lock()

    def add(self, entry: str) -> None:
        with self.lock:
            self.entries.append(entry)

    def step(self, label: str, value=None):
        def run(ctx: StepContext):
            self.add(label)
            return value if value is not None else {"step": label, "input": ctx.input}

        return run

    def undo(self, label: str):
        def run(ctx: StepContext):
            self.add(f"undo {label}")

        return run


def three_steps(journal: Journal, *, third=None, pivot: str = "", retry=None) -> WorkflowDefinition:
    return register(
        WorkflowDefinition(
            name(),
            steps=[
                Step("one", journal.step("one"), journal.undo("one"), retry=retry),
                Step("two", journal.step("two"), journal.undo("two"), retry=retry),
                Step("three", third or journal.step("three"), journal.undo("three"), retry=retry),
            ],
            pivot=pivot,
        )
    )


class TestWorkflowContract:
    def test_a_run_records_every_step_in_order(self, opened):
        journal = Journal()
        seen = {}

        def second(ctx: StepContext):
            seen.update(ctx.results)
            journal.add("two")
            return ctx.results["one"]["n"] + 1

        flow = register(
            WorkflowDefinition(
                name(),
                steps=[
                    Step("one", lambda ctx: {"n": ctx.input["start"]}),
                    Step("two", second),
                    Step("three", lambda ctx: [ctx.results["two"], ctx.attempt]),
                ],
            )
        )
        run_id = opened.workflow.start(flow, {"start": 41})
        info = opened.workflow.wait(run_id, 20)
        assert info.status == RunStatus.COMPLETED
        assert [s.name for s in info.steps] == ["one", "two", "three"]
        assert [s.status for s in info.steps] == ["completed"] * 3
        # Step two saw step one's recorded result: it was stored before two started.
        assert seen == {"one": {"n": 41}}
        assert info.results == {"one": {"n": 41}, "two": 42, "three": [42, 1]}
        assert info.result == [42, 1]
        assert info.input == {"start": 41}
        assert all(s.attempts == 1 and s.finished_at is not None for s in info.steps)

    def test_failing_steps_retry_with_the_policy(self, opened):
        calls = []

        def flaky(ctx: StepContext):
            calls.append(ctx.attempt)
            if ctx.attempt < 3:
                raise RuntimeError("try again")
            return "ok"

        flow = register(
            WorkflowDefinition(
                name(),
                steps=[Step("flaky", flaky, retry={"max_attempts": 3, "base_delay": "10ms"})],
            )
        )
        info = opened.workflow.wait(opened.workflow.start(flow), 20)
        assert info.status == RunStatus.COMPLETED
        assert calls == [1, 2, 3]
        assert info.steps[0].attempts == 3 and info.result == "ok"

    def test_a_failing_third_step_compensates_two_then_one(self, opened):
        journal = Journal()

        def third(ctx: StepContext):
            journal.add(f"three attempt {ctx.attempt}")
            raise ValueError("card declined")

        flow = three_steps(journal, third=third, retry={"max_attempts": 2})
        info = opened.workflow.wait(opened.workflow.start(flow), 20)
        assert info.status == RunStatus.FAILED
        assert journal.entries == [
            "one",
            "two",
            "three attempt 1",
            "three attempt 2",
            "undo two",
            "undo one",
        ]
        assert [s.status for s in info.steps] == ["compensated", "compensated", "failed"]
        assert "ValueError: card declined" in info.steps[2].error
        assert info.error.startswith("ValueError")
        # Compensated steps keep their results; only the failed one has none.
        assert info.results == {
            "one": {"step": "one", "input": None},
            "two": {"step": "two", "input": None},
        }

    def test_compensation_sees_the_step_result_and_skips_steps_without_one(self, opened):
        undone = []

        def undo(ctx: StepContext):
            undone.append((ctx.step, ctx.result, ctx.compensating, ctx.idempotency_key))

        flow = register(
            WorkflowDefinition(
                name(),
                steps=[
                    Step("a", lambda ctx: "A", undo, retry=NO_DELAY),
                    Step("b", lambda ctx: "B", retry=NO_DELAY),
                    Step("c", lambda ctx: 1 / 0, undo, retry=NO_DELAY),
                ],
            )
        )
        run_id = opened.workflow.start(flow)
        info = opened.workflow.wait(run_id, 20)
        assert info.status == RunStatus.FAILED
        assert undone == [("a", "A", True, f"{run_id}:a:compensate")]
        assert [s.status for s in info.steps] == ["compensated", "completed", "failed"]

    def test_a_failure_after_the_pivot_is_not_compensated_and_can_resume(self, opened):
        journal = Journal()
        broken = {"on": True}

        def third(ctx: StepContext):
            if broken["on"]:
                raise RuntimeError("carrier down")
            journal.add("three")
            return "shipped"

        flow = three_steps(journal, third=third, pivot="two", retry=NO_DELAY)
        run_id = opened.workflow.start(flow)
        info = opened.workflow.wait(run_id, 20)
        assert info.status == RunStatus.FAILED
        assert journal.entries == ["one", "two"]  # nothing undone past the pivot
        assert opened.workflow.cancel(run_id) is False
        broken["on"] = False
        assert opened.workflow.resume(run_id) is True
        info = opened.workflow.wait(run_id, 20)
        assert info.status == RunStatus.COMPLETED
        assert info.result == "shipped"
        assert journal.entries == ["one", "two", "three"]

    def test_a_step_waits_for_its_signal(self, opened):
        journal = Journal()

        def ship(ctx: StepContext):
            journal.add("ship")
            return {"approved_by": ctx.signals["approved"]["by"]}

        flow = register(
            WorkflowDefinition(
                name(),
                steps=[
                    Step("reserve", journal.step("reserve")),
                    Step("approve", wait_for="approved"),
                    Step("ship", ship),
                ],
            )
        )
        run_id = opened.workflow.start(flow)
        wait_status(opened.workflow, run_id, RunStatus.WAITING)
        info = opened.workflow.get(run_id)
        assert info.waiting_for == "approved" and journal.entries == ["reserve"]
        assert opened.workflow.signal(run_id, "approved", {"by": "ada"}) is True
        assert opened.workflow.signal(run_id, "approved", {"by": "bob"}) is False
        info = opened.workflow.wait(run_id, 20)
        assert info.status == RunStatus.COMPLETED
        assert info.results["approve"] == {"by": "ada"}
        assert info.result == {"approved_by": "ada"}
        assert info.signals == ("approved",)

    def test_a_signal_sent_early_is_kept_for_the_step(self, opened):
        gate = threading.Event()

        def first(ctx: StepContext):
            assert gate.wait(10)
            return 1

        flow = register(
            WorkflowDefinition(
                name(),
                # Not atomic: on SQLite a step's transaction holds the one write lock, and
                # this step waits for the test, which must write the signal meanwhile.
                steps=[Step("first", first, atomic=False), Step("go", wait_for="go")],
            )
        )
        run_id = opened.workflow.start(flow)
        assert opened.workflow.signal(run_id, "go", "early") is True
        gate.set()
        info = opened.workflow.wait(run_id, 20)
        assert info.status == RunStatus.COMPLETED and info.result == "early"

    def test_cancel_compensates_the_completed_steps(self, opened):
        journal = Journal()
        flow = register(
            WorkflowDefinition(
                name(),
                steps=[
                    Step("one", journal.step("one"), journal.undo("one")),
                    Step("two", journal.step("two"), journal.undo("two")),
                    Step("wait", wait_for="never"),
                ],
            )
        )
        run_id = opened.workflow.start(flow)
        wait_status(opened.workflow, run_id, RunStatus.WAITING)
        assert opened.workflow.cancel(run_id) is True
        info = opened.workflow.wait(run_id, 20)
        assert info.status == RunStatus.CANCELLED
        assert journal.entries == ["one", "two", "undo two", "undo one"]
        assert opened.workflow.cancel(run_id) is False
        assert opened.workflow.signal(run_id, "never") is False

    def test_list_and_get(self, opened):
        journal = Journal()
        done = three_steps(journal)
        parked = register(WorkflowDefinition(name(), steps=[Step("w", wait_for="x")]))
        first = opened.workflow.start(done, {"k": 1})
        opened.workflow.wait(first, 20)
        second = opened.workflow.start(parked)
        wait_status(opened.workflow, second, RunStatus.WAITING)
        listed = opened.workflow.list()
        assert [r.id for r in listed] == [second, first]
        assert [r.id for r in opened.workflow.list(workflow=done.name)] == [first]
        assert [r.id for r in opened.workflow.list(status=RunStatus.WAITING)] == [second]
        assert len(opened.workflow.list(limit=1)) == 1
        assert listed[1].steps == ()  # list leaves steps out; get has them
        assert len(opened.workflow.get(first).steps) == 3
        with pytest.raises(ValueError):
            opened.workflow.list(status="sleeping")
        with pytest.raises(RunNotFoundError):
            opened.workflow.get("no-such-run")

    def test_start_with_a_run_id_is_idempotent(self, opened):
        journal = Journal()
        flow = three_steps(journal)
        other = three_steps(Journal())
        assert opened.workflow.start(flow, run_id="order-7") == "order-7"
        assert opened.workflow.start(flow, run_id="order-7") == "order-7"
        opened.workflow.wait("order-7", 20)
        assert journal.entries == ["one", "two", "three"]
        with pytest.raises(ValueError, match="another workflow"):
            opened.workflow.start(other, run_id="order-7")
        with pytest.raises(ValueError):
            opened.workflow.start(flow, run_id="bad id with spaces")

    def test_bad_input_is_refused_and_nothing_is_stored(self, opened):
        flow = three_steps(Journal())
        with pytest.raises(TypeError, match="JSON"):
            opened.workflow.start(flow, {"when": object()})
        assert opened.workflow.list() == []
        with pytest.raises(UnknownWorkflowError):
            opened.workflow.start("no-such-workflow")
        run_id = opened.workflow.start(flow)
        with pytest.raises(ValueError):
            opened.workflow.signal(run_id, "bad name!")
        with pytest.raises(TypeError):
            opened.workflow.signal(run_id, "ok", {1, 2})

    def test_a_non_json_result_fails_the_step(self, opened):
        flow = register(
            WorkflowDefinition(name(), steps=[Step("bad", lambda ctx: object(), retry=NO_DELAY)])
        )
        info = opened.workflow.wait(opened.workflow.start(flow), 20)
        assert info.status == RunStatus.FAILED
        assert "JSON" in info.steps[0].error

    def test_a_lost_worker_lease_expires_and_the_step_runs_again(self, opened):
        journal = Journal()
        flow = register(
            WorkflowDefinition(
                name(), steps=[Step("one", journal.step("one"))], lease=0.5, queue="parked"
            )
        )
        # Queue "parked" has no worker: play the worker that claims the run and dies.
        run_id = opened.workflow.start(flow)
        now = time.time()
        assert opened.workflow._claim(run_id, "dead-worker", now, now + 0.5) is not None
        assert opened.workflow.advance(run_id) == "leased"
        time.sleep(0.6)
        assert opened.workflow.advance(run_id) == RunStatus.COMPLETED
        info = opened.workflow.get(run_id)
        assert info.status == RunStatus.COMPLETED and journal.entries == ["one"]
        assert info.steps[0].attempts == 2  # the dead worker's attempt counts

    def test_a_redelivered_step_job_is_a_no_op(self, opened):
        from toolkit_batteries.queue.jobs.payload import decode

        journal = Journal()
        flow = three_steps(journal)
        flow = register(
            WorkflowDefinition(name(), steps=list(flow.steps), queue="manual-redelivery")
        )
        run_id = opened.workflow.start(flow)
        queue = opened.container.queue()
        first = queue.pop("jobs:manual-redelivery", timeout=1)
        call = decode(first.body)
        assert list(call.args[:2]) == ["default", run_id] and list(call.args[4:]) == [0, False]
        assert opened.workflow.advance(run_id, flow.name, (0, False)) == "step"
        # The same job again (a redelivery after a lost acknowledgement): nothing runs.
        assert opened.workflow.advance(run_id, flow.name, (0, False)) == "stale"
        assert journal.entries == ["one"]
        assert opened.workflow.get(run_id).current == 1
        assert opened.workflow.get(run_id).steps[0].attempts == 1

    def test_recover_requeues_runs_whose_job_was_lost(self, opened):
        journal = Journal()
        flow = register(
            WorkflowDefinition(name(), steps=[Step("one", journal.step("one"))], queue="lost")
        )
        run_id = opened.workflow.start(flow)
        queue = opened.container.queue()
        lost = queue.pop("jobs:lost", timeout=1)
        assert lost is not None and queue.ack(lost)  # the job is gone
        assert opened.workflow.recover() == 1
        message = queue.pop("jobs:lost", timeout=1)
        assert opened.worker.handle(message) == "succeeded"
        assert opened.workflow.get(run_id).status == RunStatus.COMPLETED
        assert opened.workflow.recover() == 0

    def test_duplicate_step_jobs_never_run_a_step_twice(self, opened):
        from toolkit_batteries.queue.jobs import Worker

        counts: dict[tuple[str, str], int] = {}
        lock = threading.Lock()

        def count(ctx: StepContext):
            with lock:
                key = (ctx.run_id, ctx.step)
                counts[key] = counts.get(key, 0) + 1
            time.sleep(0.002)
            return 1

        flow = register(
            WorkflowDefinition(
                name(), steps=[Step(s, count, atomic=False) for s in ("a", "b", "c")]
            )
        )
        extra = Worker(opened.container.queue(), queues=("default",), concurrency=3)
        extra.start()
        try:
            ids = [opened.workflow.start(flow) for _ in range(8)]
            for _ in range(5):  # every claimable run gets another job, racing the first
                opened.workflow.recover()
                time.sleep(0.01)
            infos = [opened.workflow.wait(run_id, 30) for run_id in ids]
        finally:
            extra.stop()
            extra.join(5)
        assert all(info.status == RunStatus.COMPLETED for info in infos)
        assert counts == {(run_id, s): 1 for run_id in ids for s in ("a", "b", "c")}

    def test_purge_deletes_only_finished_idle_runs(self, opened):
        done = three_steps(Journal())
        parked = register(WorkflowDefinition(name(), steps=[Step("w", wait_for="x")]))
        finished = opened.workflow.start(done)
        opened.workflow.wait(finished, 20)
        waiting = opened.workflow.start(parked)
        wait_status(opened.workflow, waiting, RunStatus.WAITING)
        assert opened.workflow.purge(3600) == 0  # finished, but not idle that long
        time.sleep(0.05)
        assert opened.workflow.purge(0) == 1
        assert [r.id for r in opened.workflow.list()] == [waiting]
        with pytest.raises(RunNotFoundError):
            opened.workflow.get(finished)
        with pytest.raises(ValueError):
            opened.workflow.purge(-1)

    def test_steps_write_through_the_workflow_database(self, opened):
        flow = register(
            WorkflowDefinition(name(), steps=[Step("where", lambda ctx: ctx.using or "")])
        )
        info = opened.workflow.wait(opened.workflow.start(flow), 20)
        expected = "" if opened.variant == "memory" else opened.workflow.database.alias
        assert info.result == expected

    def test_failure_logs_carry_no_input_or_secret(self, opened, caplog):
        secret = "sk_live_" + uuid.uuid4().hex

        def leak(ctx: StepContext):
            raise RuntimeError("declined")

        flow = register(WorkflowDefinition(name(), steps=[Step("pay", leak, retry=NO_DELAY)]))
        with caplog.at_level(logging.DEBUG):
            info = opened.workflow.wait(opened.workflow.start(flow, {"card": secret}), 20)
        assert info.status == RunStatus.FAILED
        assert secret not in caplog.text
        assert secret not in repr(opened.workflow)


def wait_status(workflow, run_id: str, status: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while workflow.get(run_id).status != status:
        assert time.monotonic() < deadline, f"run never reached {status}"
        time.sleep(0.02)


class TestDefinitions:
    def test_steps_by_dotted_path_and_registered_name(self):
        step_function(lambda ctx: "named", name="tests.workflow.named")
        flow = WorkflowDefinition(
            name(),
            steps=[
                Step("a", "tests.workflow.named"),
                Step("b", "json.dumps"),
            ],
        )
        from toolkit_batteries.workflow.definition import resolve_callable

        assert resolve_callable(flow.steps[0].execute)(None) == "named"
        assert resolve_callable(flow.steps[1].execute)([1]) == "[1]"
        with pytest.raises(DefinitionError):
            resolve_callable("tests.workflow.nowhere_at_all")

    def test_bad_definitions_are_refused(self):
        with pytest.raises(DefinitionError):
            WorkflowDefinition(name(), steps=[])
        with pytest.raises(DefinitionError):
            WorkflowDefinition(name(), steps=[Step("a", print), Step("a", print)])
        with pytest.raises(DefinitionError):
            WorkflowDefinition(name(), steps=[Step("a", print)], pivot="zzz")
        with pytest.raises(DefinitionError):
            Step("a")  # neither execute nor wait_for
        with pytest.raises(DefinitionError):
            Step("bad name", print)
        with pytest.raises(DefinitionError):
            WorkflowDefinition("x y", steps=[Step("a", print)])

    def test_a_name_registers_once(self):
        flow = register(WorkflowDefinition(name(), steps=[Step("a", print)]))
        assert register(flow) is flow
        assert definition(flow.name) is flow
        with pytest.raises(DefinitionError):
            register(WorkflowDefinition(flow.name, steps=[Step("b", print)]))
        with pytest.raises(UnknownWorkflowError):
            definition(name("missing"))

    def test_steps_default_to_the_resilience_retry_policy(self):
        step = Step("a", print)
        assert step.policy.max_attempts == 3
        assert step.policy.multiplier == 2
        assert Step("b", print, retry={"MaxAttempts": 5}).policy.max_attempts == 5

    def test_a_step_can_take_a_resilience_instance_retry_policy(self):
        from django.test import override_settings

        toolkit = {
            "resilience": {
                "payments": {"options": {"retry": {"MaxAttempts": 7, "BaseDelay": "1s"}}}
            }
        }
        with override_settings(TOOLKIT=toolkit):
            policy = Step("c", print, retry="payments").policy
            assert Step("d", print, retry="default").policy.max_attempts == 3
        assert policy.max_attempts == 7 and policy.base_delay.total_seconds() == 1
