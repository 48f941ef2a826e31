"""The run's claim made by the pop of its step job (``db`` queue on PostgreSQL, issue 27).

Once a service has run a step from a topic, later pops of that topic claim the run the
popped job names in the pop's own statement, and the step takes that claim instead of
claiming again: two round trips a step (pop, record) instead of three. The claim must
be exactly ``_claim``'s (same namespace, free run, same position), and no body pushed
on the topic may make the pop fail or claim a run it does not name byte for byte.
"""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from toolkit_batteries.queue.adapters.db import JoinedMessage
from toolkit_batteries.queue.jobs import Worker
from toolkit_batteries.workflow import RunStatus, Step, WorkflowDefinition, register
from toolkit_batteries.workflow.adapters.pop_claim import step_job_prefix

from ...support.libpq_trace import round_trips, sent_messages
from .conftest import open_workflow, unique, workflow_block


def _attempt(ctx) -> int:
    return ctx.attempt


class _Driven:
    """A workflow on the db queue whose pops and steps the test makes itself."""

    def __init__(self, request: pytest.FixtureRequest, **options) -> None:
        block = workflow_block("db-postgres-dbqueue", request, **options)
        self.container, self.workflow, running = open_workflow(block, db_queue=True)
        running.stop()
        running.join(5)
        self.queue = self.container.queue()
        self.flow = register(
            WorkflowDefinition(
                unique("pc"), steps=[Step(f"s{i}", _attempt) for i in range(4)], queue=unique("q")
            )
        )
        self.topic = f"jobs:{self.flow.queue}"
        self.worker = Worker(self.queue, queues=(self.flow.queue,))

    def pop(self):
        message = self.queue.pop(self.topic, timeout=0)
        assert message is not None
        return message

    def step(self) -> None:
        """Pop and run one step (the first one teaches the service this topic)."""
        assert self.worker.handle(self.pop()) == "succeeded"

    def run_at_second_step(self) -> str:
        """Start a run and run its first step: its next job waits on a joined topic."""
        run_id = self.workflow.start(self.flow)
        self.step()
        assert self.workflow._load(run_id).current == 1
        return run_id

    def close(self) -> None:
        self.workflow._runs.delete()
        self.container.close()


@pytest.fixture
def driven(request):
    made = _Driven(request)
    yield made
    made.close()


def test_a_step_is_popped_with_its_run_claimed_and_takes_two_round_trips(driven):
    run_id = driven.run_at_second_step()
    message = driven.pop()
    assert isinstance(message, JoinedMessage) and message.joined is not None
    assert message.joined[0] == run_id  # the run's row, as the claim returned it
    claimed = driven.workflow._load(run_id)
    assert claimed.lease_owner and claimed.lease_until > driven.workflow.clock()
    assert (claimed.attempt, claimed.current, claimed.status) == (1, 1, RunStatus.RUNNING)
    assert driven.worker.handle(message) == "succeeded"
    after = driven.workflow._load(run_id)
    assert (after.current, after.lease_owner) == (2, "")
    assert [s.result for s in driven.workflow._steps(run_id)] == [1, 1]
    assert driven.queue.size(driven.topic) == 1  # the third step's job, and no other

    # The statements are prepared by now: count a step's round trips.
    conn = driven.queue.database.django_connection
    sent = sent_messages(conn, driven.step)
    assert round_trips(sent) == 2  # the pop (with the claim), the record (with the ack)
    driven.step()
    assert driven.workflow.get(run_id).status == RunStatus.COMPLETED


def test_a_run_leased_by_a_live_worker_is_not_claimed_by_the_pop(driven):
    run_id = driven.run_at_second_step()
    now = driven.workflow.clock()
    driven.workflow._update(run_id, {"lease_owner": "B" * 32, "lease_until": now + 60})
    message = driven.pop()
    assert isinstance(message, JoinedMessage) and message.joined is None
    assert driven.workflow._load(run_id).lease_owner == "B" * 32
    assert driven.workflow.advance(run_id, driven.flow.name, (1, False)) == "leased"


def test_a_job_for_a_position_the_run_left_claims_nothing(driven):
    run_id = driven.run_at_second_step()
    topic, body = driven.workflow._job(driven.flow, run_id, (0, False))
    driven.queue.push(topic, body)
    first, second = driven.pop(), driven.pop()
    stale = first if json.loads(first.body)["args"][4] == 0 else second
    assert stale.joined is None


def test_no_body_makes_the_pop_fail_or_claim_a_run_it_does_not_name(driven):
    """Bodies a producer (or an attacker with push rights) could put on the topic: each
    is popped, none claims the free run it nearly names; the exact job does (control)."""
    run_id = driven.run_at_second_step()
    prefix = step_job_prefix(driven.workflow.instance).encode()
    name = driven.flow.name.encode()
    rest = b'","' + b"0" * 32 + b'","' + name + b'",1,false],"kwargs":{}}'
    near = [
        prefix + run_id.encode() + rest + b"x",  # trailing bytes
        prefix + run_id.encode() + rest.replace(b"{}}", b'{"a":"b"}}'),  # other kwargs
        prefix + run_id.encode() + rest.replace(b",1,", b",99999999999999999999,"),
        prefix + run_id.encode() + rest.replace(b",1,", b",one,"),
        prefix + run_id.encode() + rest.replace(b"false", b"true"),  # compensating: no
        prefix + run_id.encode() + rest.replace(name, name + b'\\"'),
        prefix + run_id.encode() + b"\xff\xfe\x00" + rest,  # not UTF-8, a NUL
        prefix + run_id.encode()[:-1] + b"'" + rest,
        prefix.replace(b'"default"', b'"other"') + run_id.encode() + rest,
        prefix + run_id.encode() + rest.replace(name, b"unknown-workflow"),
    ]
    # Drop the run's own job (popped in a transaction: no claim) so every pop below
    # is one of these bodies.
    with transaction.atomic(using=driven.queue.database.alias):
        driven.queue.ack(driven.pop())
    for body in near:
        driven.queue.push(driven.topic, body)
        message = driven.pop()
        assert message.body == body and message.joined is None, body
        assert driven.workflow._load(run_id).lease_owner == ""
        driven.queue.ack(message)
    driven.queue.push(driven.topic, prefix + run_id.encode() + rest)
    assert driven.pop().joined[0] == run_id  # the same bytes, untouched, do claim


def test_a_run_of_another_namespace_is_never_claimed(driven, request):
    """Two services of one instance name on one database and topic: the pop claims
    only runs of the namespace of the service that joined it."""
    driven.run_at_second_step()  # joins the topic for this service's namespace
    other = _Driven(request)
    try:
        other_run = other.workflow.start(driven.flow)  # same definition, same topic
        message = driven.pop()
        while json.loads(message.body)["args"][1] != other_run:
            message = driven.pop()
        assert isinstance(message, JoinedMessage) and message.joined is None
        assert other.workflow._load(other_run).lease_owner == ""
    finally:
        other.close()


def test_a_pop_inside_a_transaction_claims_nothing(driven):
    run_id = driven.run_at_second_step()
    with transaction.atomic(using=driven.queue.database.alias):
        message = driven.pop()
    assert not isinstance(message, JoinedMessage)
    assert driven.workflow._load(run_id).lease_owner == ""
    assert driven.worker.handle(message) == "succeeded"  # the step claims as before
    assert driven.workflow._load(run_id).current == 2


def test_instance_names_json_escapes_get_no_prefix():
    assert step_job_prefix("default").endswith('"args":["default","')
    assert step_job_prefix('quo"te') is None
    assert step_job_prefix("naïve") is None
