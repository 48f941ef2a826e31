"""Workflow benchmarks: steps per second against plain queue jobs doing the same work.

Both sides run on the same queue adapter in the same process, driven by the same
:class:`~toolkit_batteries.queue.jobs.Worker` (``handle`` on each popped message, one
thread, no polling sleeps), and do the same work per unit: one no-op function call.

* **workflow**: ``RUNS`` runs of ``STEPS`` no-op steps; each step is one job
  (``toolkit.workflow.advance``) that claims the run, runs the step, records its result,
  moves the run on and queues the next step's job. Figure: recorded steps per second.
* **baseline**: ``RUNS x STEPS`` plain ``@job`` calls of the same no-op function on
  the same queue. Figure: jobs per second.

``memory``: memory workflow on the memory queue. ``db``: db workflow and db queue on a
fresh migrated PostgreSQL database (dropped afterwards). Runs of the two sides are
interleaved and the best of several repeats kept (:mod:`bench._measure`), so a loaded
machine slows both alike.

Round trips per unit on PostgreSQL (counted from libpq's protocol trace of the worker's
connection, one per ``Sync`` or simple ``Query`` the client sends, starts included, and
printed as a line of their own): a plain job is 3 (the queue's pop, push and ack, each
committing alone); a step is 2: the queue's pop, which also claims the run the job
names (:mod:`toolkit_batteries.workflow.adapters.pop_claim`), then one statement that
moves the run, writes the step's row, pushes the next step's job and deletes the step's
own message (the ack), committing alone; a start (the run's row and its first job, one
statement) adds 1 per run, 0.2 per step here. It was 8, then 7 (issue 27: the move and
the step's row in one statement), then 3 (the push and ack in the move), with BEGIN,
the next push, COMMIT, the worker's ack and the run's claim as round trips of their own.

Targets: PostgreSQL, issue 27's 0.6x plain jobs; memory, no issue target, a floor of
0.1x (a no-op job there costs microseconds, a step a claim, a record and a push).
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from bench._curves import Lines
from bench._measure import best_interleaved
from bench.foundation import Result

POSTGRES_DSN = os.environ.get(
    "TOOLKIT_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
)
#: Runs per round and steps per run.
RUNS, STEPS = 20, 5


def _noop(ctx: Any = None) -> int:
    return 1


def _drive(queue: Any, worker: Any, topic: str) -> None:
    """Handle messages of ``topic`` until none is left (steps queue their successors)."""
    pop, handle = queue.pop, worker.handle
    while True:
        message = pop(topic, timeout=0)
        if message is None:
            return
        handle(message)


def _round_trips(queue: Any, loop: Any) -> float:
    """Run ``loop(1)`` with libpq tracing this thread's connection; return round trips."""
    import tempfile

    from psycopg import pq

    queue.database.connect()
    pgconn = queue.database.django_connection.connection.pgconn
    with tempfile.NamedTemporaryFile("w+") as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        loop(1)
        pgconn.untrace()
        with open(trace.name) as written:
            sent = [line.split("\t")[2].split()[0] for line in written if line.startswith("F")]
    return sum(message in _WAITS for message in sent) / (RUNS * STEPS)


#: Messages after which the client waits for the server's answer.
_WAITS = ("Sync", "Query")


def _measure(toolkit: dict, label: str, repeats: int, target: float) -> list[Result]:
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container
    from toolkit_batteries.queue.jobs import JobRegistry, QueueDispatcher, Worker, job
    from toolkit_batteries.queue.jobs.registry import registry
    from toolkit_batteries.workflow import RunStatus, Step, WorkflowDefinition, register

    container = Container(Config.load(toolkit, {}))
    try:
        workflow, queue = container.workflow(), container.queue()
        flow = register(
            WorkflowDefinition(
                f"bench-{uuid.uuid4().hex[:8]}",
                steps=[Step(f"s{i}", _noop) for i in range(STEPS)],
                queue="wfbench",
            )
        )
        jobs = JobRegistry()
        plain = job(name="bench.workflow.noop", queue="jobbench", registry=jobs)(_noop)
        dispatcher = QueueDispatcher(queue, jobs=jobs)
        wf_worker = Worker(queue, queues=("wfbench",), jobs=registry)
        job_worker = Worker(queue, queues=("jobbench",), jobs=jobs)

        def ours(rounds: int) -> None:
            for _ in range(rounds):
                ids = [workflow.start(flow) for _ in range(RUNS)]
                _drive(queue, wf_worker, "jobs:wfbench")
                assert workflow.get(ids[-1]).status == RunStatus.COMPLETED

        def base(rounds: int) -> None:
            for _ in range(rounds):
                for _ in range(RUNS * STEPS):
                    dispatcher.dispatch(plain)
                _drive(queue, job_worker, "jobs:jobbench")

        ours(1), base(1)  # warm up both
        mine, theirs = best_interleaved(ours, base, 1, repeats=repeats, per_unit=RUNS * STEPS)
        trips = []
        if workflow.adapter_name != "memory":
            trips = [_round_trips(queue, ours), _round_trips(queue, base)]
            workflow._runs.delete()
    finally:
        container.close()
    lines = [
        Result(
            f"workflow steps ({label}) vs plain queue jobs",
            mine,
            theirs,
            "steps/s",
            f">= {target}x",
            mine >= target * theirs,
            number=",.0f",
        )
    ]
    if trips:
        step, plain = trips
        lines.append(
            Result(
                f"round trips per step ({label}) vs plain job",
                step,
                plain,
                "trips",
                "<= 1.1x a plain job's",
                step <= 1.1 * plain,
            )
        )
    return lines


def bench_memory() -> Result:
    """Time memory-workflow steps against plain jobs on the memory queue."""
    toolkit = {"workflow": {"adapter": "memory"}, "queue": {"adapter": "memory"}}
    return _measure(toolkit, "memory", repeats=5, target=0.1)[0]


def bench_db_postgres() -> Lines:
    """Time db-workflow steps against plain jobs, both on PostgreSQL (db queue)."""
    from bench.queue import _drop_database, _migrated_database

    dsn = _migrated_database()
    try:
        from django.core.management import call_command
        from django.db import connections

        from toolkit_batteries.core.slots import slot_alias
        from toolkit_batteries.db.databases import postgres_entry

        alias = slot_alias(connections, postgres_entry(dsn), preferred="", prefix="bench_db")
        call_command("migrate", "toolkit_workflow", database=alias, verbosity=0)
        connections[alias].close()
        toolkit = {
            "workflow": {"adapter": "db", "options": {"dsn": dsn}},
            "queue": {"adapter": "db", "options": {"dsn": dsn}},
        }
        return Lines(_measure(toolkit, "db, PostgreSQL", repeats=9, target=0.6))
    finally:
        from django.db import connections

        for conn in connections.all(initialized_only=True):
            if conn.settings_dict.get("NAME") == dsn.rsplit("/", 1)[-1]:
                conn.close()
        _drop_database(dsn)


BENCHMARKS = (bench_memory, bench_db_postgres)
