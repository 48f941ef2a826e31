"""Promises of cancel() and resume(), on every adapter (memory, db on SQLite and PostgreSQL,
sqlserver on PostgreSQL), with the real worker thread running the steps.

* ``resume()`` of a ``compensation_failed`` run runs the compensation that failed again
  (and the ones below it), each step undone exactly once in the end.
* ``cancel()`` tells the truth at every position: before the pivot, during the pivot,
  after it, and during the last step. ``True`` means the run ends ``cancelled`` with
  every completed step compensated; ``False`` means it goes on and completes.
"""

from __future__ import annotations

import threading

import pytest

from toolkit_batteries.workflow import RunStatus, Step, StepContext, WorkflowDefinition, register

from .test_contract import NO_DELAY, Journal, name, wait_status


class Held:
    """A step body that stays in progress until the test lets it finish."""

    def __init__(self, journal: Journal, label: str) -> None:
        self.journal, self.label = journal, label
        self.entered, self.release = threading.Event(), threading.Event()

    def __call__(self, ctx: StepContext) -> str:
        self.journal.add(self.label)
        self.entered.set()
        assert self.release.wait(20), "the test never released the step"
        return self.label


def test_resume_retries_the_failed_compensation_until_it_succeeds(every_adapter):
    workflow = every_adapter.workflow
    undone: list[str] = []
    refund_outages = {"left": 2}

    def refund(ctx: StepContext) -> None:
        undone.append("b")
        if refund_outages["left"]:
            refund_outages["left"] -= 1
            raise RuntimeError("refund service down")

    flow = register(
        WorkflowDefinition(
            name(),
            steps=[
                Step("a", lambda ctx: "A", lambda ctx: undone.append("a"), retry=NO_DELAY),
                Step("b", lambda ctx: "B", refund, retry=NO_DELAY),
                Step("c", lambda ctx: 1 / 0, retry=NO_DELAY),
            ],
        )
    )
    run_id = workflow.start(flow)
    info = workflow.wait(run_id, 20)
    assert info.status == RunStatus.COMPENSATION_FAILED
    assert undone == ["b"]
    assert [s.status for s in info.steps] == ["completed", "compensation_failed", "failed"]

    assert workflow.resume(run_id) is True  # the refund fails a second time
    info = workflow.wait(run_id, 20)
    assert info.status == RunStatus.COMPENSATION_FAILED
    assert undone == ["b", "b"]

    assert workflow.resume(run_id) is True  # now it succeeds, then "a" is undone
    info = workflow.wait(run_id, 20)
    assert info.status == RunStatus.FAILED
    assert undone == ["b", "b", "b", "a"]
    assert [s.status for s in info.steps] == ["compensated", "compensated", "failed"]
    assert info.results == {"a": "A", "b": "B"}
    assert workflow.resume(run_id) is False  # nothing left to undo or retry


def _saga(journal: Journal, held_step: str, *, pivot: str) -> tuple[WorkflowDefinition, Held]:
    """Three undoable steps; ``held_step`` stays in progress until released."""
    held = Held(journal, held_step)
    steps = []
    for label in ("one", "two", "three"):
        body = held if label == held_step else journal.step(label, label)
        # Not atomic: on SQLite a step's transaction holds the one write lock, and the
        # test cancels while the step is in progress.
        steps.append(Step(label, body, journal.undo(label), retry=NO_DELAY, atomic=False))
    return register(WorkflowDefinition(name(), steps=steps, pivot=pivot)), held


#: (step in progress when cancel() is called, pivot, what cancel() answers, the journal).
POSITIONS = {
    "before-the-pivot": ("one", "two", True, ["one", "undo one"]),
    "at-the-pivot": ("two", "two", True, ["one", "two", "undo two", "undo one"]),
    "after-the-pivot": ("three", "two", False, ["one", "two", "three"]),
    "during-the-last-step": (
        "three",
        "",
        True,
        ["one", "two", "three", "undo three", "undo two", "undo one"],
    ),
}


@pytest.mark.parametrize("position", list(POSITIONS))
def test_cancel_answers_true_only_when_the_run_ends_cancelled(every_adapter, position):
    held_step, pivot, answer, expected = POSITIONS[position]
    workflow = every_adapter.workflow
    journal = Journal()
    flow, held = _saga(journal, held_step, pivot=pivot)
    run_id = workflow.start(flow)
    assert held.entered.wait(20), "the held step never started"
    try:
        assert workflow.cancel(run_id) is answer
    finally:
        held.release.set()
    info = workflow.wait(run_id, 20)
    assert journal.entries == expected
    if answer:
        assert info.status == RunStatus.CANCELLED
        assert all(s.status == "compensated" for s in info.steps)
    else:
        assert info.status == RunStatus.COMPLETED and info.result == "three"
    assert workflow.cancel(run_id) is False  # finished either way


def test_a_cancelled_run_whose_undo_failed_ends_cancelled_after_resume(every_adapter):
    workflow = every_adapter.workflow
    journal = Journal()
    outage = {"on": True}

    def release(ctx: StepContext) -> None:
        journal.add("undo one")
        if outage["on"]:
            raise RuntimeError("stock service down")

    flow = register(
        WorkflowDefinition(
            name(),
            steps=[
                Step("one", journal.step("one"), release, retry=NO_DELAY),
                Step("wait", wait_for="never"),
            ],
        )
    )
    run_id = workflow.start(flow)
    wait_status(workflow, run_id, RunStatus.WAITING)
    assert workflow.cancel(run_id) is True
    assert workflow.wait(run_id, 20).status == RunStatus.COMPENSATION_FAILED
    outage["on"] = False
    assert workflow.resume(run_id) is True
    info = workflow.wait(run_id, 20)
    assert info.status == RunStatus.CANCELLED
    assert journal.entries == ["one", "undo one", "undo one"]
    assert [s.status for s in info.steps] == ["compensated"]
