"""What only the ``db`` / ``sqlserver`` adapter has: transactions, tables, aliases, admin."""

from __future__ import annotations

import contextlib
import time
import uuid

import pytest
from django.db import connections, transaction

from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.queue.jobs import Worker
from toolkit_batteries.workflow import RunStatus, Step, StepContext, WorkflowDefinition, register
from toolkit_batteries.workflow.admin import WorkflowRunAdmin
from toolkit_batteries.workflow.models import WorkflowRun

from .conftest import open_workflow, unique, workflow_block

DB_VARIANTS = ("db-sqlite", "db-postgres")


@pytest.fixture(params=DB_VARIANTS)
def db_opened(request):
    container, workflow, worker = open_workflow(workflow_block(request.param, request))
    with connections[workflow.database.alias].cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS wf_unit_effects (run_id varchar(64), step text)")
    yield workflow, container.queue(), worker
    worker.stop()
    worker.join(5)
    workflow._runs.delete()
    container.close()


def write_effect(ctx: StepContext) -> None:
    """Write one row in the step's own transaction (``ctx.using``), as a real step would."""
    with connections[ctx.using].cursor() as cursor:
        cursor.execute(
            "INSERT INTO wf_unit_effects (run_id, step) VALUES (%s, %s)", [ctx.run_id, ctx.step]
        )


def effect_rows(workflow, run_id: str) -> list[str]:
    rows = workflow.database.fetch_all(
        "SELECT step FROM wf_unit_effects WHERE run_id = %s ORDER BY step", (run_id,)
    )
    return [row[0] for row in rows]


def test_a_step_that_lost_its_lease_rolls_back_its_writes(db_opened):
    workflow, _, _ = db_opened

    def write(ctx: StepContext):
        write_effect(ctx)
        # Meanwhile our lease expired and another worker took the run over.
        workflow._update(ctx.run_id, {"lease_owner": "someone-else"})
        return "written"

    flow = register(
        WorkflowDefinition(f"wf-{uuid.uuid4().hex[:8]}", steps=[Step("w", write)], queue="manual")
    )
    run_id = workflow.start(flow)
    assert workflow.advance(run_id) == "lost"
    assert effect_rows(workflow, run_id) == []  # rolled back with the refused record
    info = workflow.get(run_id)
    assert info.steps == () and info.current == 0


def test_step_writes_commit_with_the_record(db_opened):
    workflow, _, _ = db_opened

    def write(ctx: StepContext):
        write_effect(ctx)
        if ctx.step == "b" and ctx.attempt == 1:
            raise RuntimeError("after the write")
        return ctx.step

    flow = register(
        WorkflowDefinition(
            f"wf-{uuid.uuid4().hex[:8]}",
            steps=[Step("a", write), Step("b", write, retry={"max_attempts": 2})],
        )
    )
    run_id = workflow.start(flow)
    assert workflow.wait(run_id, 20).status == RunStatus.COMPLETED
    # b's first attempt wrote, then failed: its write rolled back; the retry's stayed.
    assert effect_rows(workflow, run_id) == ["a", "b"]


def test_start_joins_the_callers_transaction(db_opened):
    workflow, queue, _ = db_opened
    flow = register(
        WorkflowDefinition(f"wf-{uuid.uuid4().hex[:8]}", steps=[Step("a", print)], queue="txn")
    )
    with pytest.raises(RuntimeError), transaction.atomic(using=workflow.using):
        run_id = workflow.start(flow)
        raise RuntimeError("the business write failed")
    with pytest.raises(Exception, match="no run"):
        workflow.get(run_id)
    assert queue.size("jobs:txn") == 0  # no job for a run that never was
    with transaction.atomic(using=workflow.using):
        kept = workflow.start(flow)
        assert queue.size("jobs:txn") == 0  # pushed on commit
    assert queue.size("jobs:txn") == 1
    assert workflow.get(kept).status == RunStatus.PENDING


@pytest.fixture
def idle_postgres(request):
    """Yield the workflow on PostgreSQL and its queue, worker stopped: the test delivers."""
    container, workflow, worker = open_workflow(workflow_block("db-postgres", request))
    worker.stop()
    worker.join(5)
    yield workflow, container.queue()
    workflow._runs.delete()
    container.close()


@contextlib.contextmanager
def _row_locked(request, run_id: str, mode: str):
    """Hold ``mode`` (``FOR UPDATE``, ``FOR KEY SHARE``) on the run's row from another
    connection's open transaction, as another worker or a signal's insert would."""
    import psycopg

    with psycopg.connect(request.getfixturevalue("postgres_dsn")) as other:
        table = WorkflowRun._meta.db_table
        other.execute(f"SELECT id FROM {table} WHERE id = %s {mode}", (run_id,))
        yield


def _one(ctx) -> int:
    return 1


def _started(workflow, queue) -> tuple[WorkflowDefinition, str]:
    """Start a one-step run on job queue ``lk`` and take its job off the queue."""
    flow = register(
        WorkflowDefinition(f"wf-{uuid.uuid4().hex[:8]}", steps=[Step("a", _one)], queue="lk")
    )
    run_id = workflow.start(flow)
    assert queue.ack(queue.pop("jobs:lk", timeout=0))  # this test delivers the job itself
    return flow, run_id


def test_claims_skip_a_locked_row_on_postgresql(request, idle_postgres):
    workflow, queue = idle_postgres
    _, run_id = _started(workflow, queue)
    with _row_locked(request, run_id, "FOR UPDATE"):  # another worker's transaction
        started = time.monotonic()
        assert workflow._claim(run_id, "me", time.time(), time.time() + 5) is None
        assert time.monotonic() - started < 2  # skipped, did not wait for the lock
    assert workflow._claim(run_id, "me", time.time(), time.time() + 5) is not None


def test_a_signal_insert_in_flight_does_not_stop_the_claim(request, idle_postgres):
    """A signal's insert holds ``FOR KEY SHARE`` on its run (its foreign key check) until
    it commits. The claim locks ``FOR NO KEY UPDATE``, which that lock allows: with
    ``FOR UPDATE`` the claim skipped the run and the step job was dropped as ``busy``,
    leaving the run pending for good (a flaky contract test under load)."""
    workflow, queue = idle_postgres
    flow, run_id = _started(workflow, queue)
    with _row_locked(request, run_id, "FOR KEY SHARE"):  # a signal's insert, uncommitted
        assert workflow.advance(run_id, flow.name, (0, False)) == RunStatus.COMPLETED


def test_a_free_run_whose_row_is_locked_is_looked_at_again_not_dropped(request, idle_postgres):
    """Another worker's claim in flight holds the row: the job answers ``busy`` and is
    queued again at the position it read, so the run is never stranded."""
    workflow, queue = idle_postgres
    flow, run_id = _started(workflow, queue)
    with _row_locked(request, run_id, "FOR UPDATE"):
        assert workflow.advance(run_id, flow.name, (0, False)) == "busy"
    again = queue.pop("jobs:lk", timeout=5)
    assert again is not None  # queued again, at the position it was read at
    assert Worker(queue, queues=("lk",)).handle(again) == "succeeded"
    assert workflow.get(run_id).status == RunStatus.COMPLETED


def test_sqlserver_is_the_db_adapter(request):
    block = workflow_block("db-sqlite", request)
    block["adapter"] = "sqlserver"
    container, workflow, worker = open_workflow(block)
    try:
        assert workflow.adapter_name == "sqlserver"
        flow = register(
            WorkflowDefinition(f"wf-{uuid.uuid4().hex[:8]}", steps=[Step("a", lambda c: 5)])
        )
        assert workflow.wait(workflow.start(flow), 20).result == 5
    finally:
        worker.stop()
        worker.join(5)
        workflow._runs.delete()
        container.close()


def test_dedicated_pool_gives_the_workflow_its_own_alias(request):
    dsn = request.getfixturevalue("postgres_dsn")
    toolkit = {
        "queue": {"adapter": "memory"},
        "workflow": {
            "shared": {"adapter": "db", "options": {"dsn": dsn}},
            "private": {"adapter": "db", "options": {"dsn": dsn, "dedicated_pool": True}},
        },
        "idempotency": {"adapter": "db", "options": {"dsn": dsn}},
    }
    container = Container(Config.load(toolkit, {}))
    try:
        shared = container.workflow("shared").using
        private = container.workflow("private").using
        assert shared == container.idempotency().database.alias  # one alias per DSN
        assert private != shared
        assert (
            connections[private].settings_dict["NAME"] == connections[shared].settings_dict["NAME"]
        )
    finally:
        container.close()


def test_table_option_must_name_the_migrated_table(request):
    block = workflow_block("db-sqlite", request, table="somewhere_else")
    with pytest.raises(InvalidOptionsError, match="table") as caught:
        Container(Config.load({"workflow": block, "queue": {"adapter": "memory"}}, {})).workflow()
    assert "somewhere_else" not in str(caught.value)
    same = workflow_block("db-sqlite", request, table=WorkflowRun._meta.db_table)
    container, workflow, worker = open_workflow(same)
    worker.stop()
    worker.join(5)
    assert workflow.adapter_name == "db"
    container.close()


def test_the_table_option_names_the_tables_when_models_load(tmp_path):
    """A child process with WORKFLOW__DEFAULT__TABLE migrates and uses tables of that name."""
    import os
    import sqlite3

    from tests.subprocesses import run_python_json

    from .test_crash import ROOT

    path = tmp_path / "named.sqlite3"
    code = (
        "import django, json; django.setup()\n"
        "from django.core.management import call_command\n"
        "from toolkit_batteries.db.databases import sqlite_entry\n"
        "from tests.conftest import migrate_database\n"
        "from toolkit_batteries.workflow.models import WorkflowRun, WorkflowStep\n"
        "migrate_database(sqlite_entry(os.environ['DB_PATH']))\n"
        "from toolkit_batteries.core.config import Config\n"
        "from toolkit_batteries.core.container import Container\n"
        "from toolkit_batteries.workflow import Step, WorkflowDefinition, register\n"
        "c = Container(Config.load({'queue': {'adapter': 'memory'}, 'workflow': {'adapter': 'db',"
        " 'options': {'dsn': os.environ['DB_PATH'], 'table': 'orders_saga'}}}, {}))\n"
        "w = c.workflow()\n"
        "w.start(register(WorkflowDefinition('t', steps=[Step('a', print)])))\n"
        "print(json.dumps([WorkflowRun._meta.db_table, WorkflowStep._meta.db_table]))\n"
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("WORKFLOW_")},
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "PYTHONPATH": str(ROOT),
        "WORKFLOW__DEFAULT__TABLE": "orders_saga",
        "DB_PATH": str(path),
    }
    tables = run_python_json("import os\n" + code, cwd=ROOT, env=env)
    assert tables == ["orders_saga", "orders_saga_step"]
    with sqlite3.connect(path) as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        assert conn.execute("SELECT count(*) FROM orders_saga").fetchone() == (1,)
    assert {"orders_saga", "orders_saga_step", "orders_saga_signal"} <= names
    assert "toolkit_workflow_run" not in names


def test_checks_name_the_instance_and_field_never_the_value():
    config = Config.load(
        {
            "workflow": {
                "bad": {"adapter": "db", "options": {"dsn": "mysql://u:hunter2@h/db"}},
                "named": {"adapter": "memory", "options": {"table": "bad table!"}},
                "remote": {"adapter": "memory", "options": {"host_port": "wf.example:7233"}},
                "long": {"adapter": "memory", "options": {"namespace": "n" * 65}},
                "fine": {"adapter": "db"},
            }
        },
        {},
    )
    found = {message.id: message.msg for message in service_checks("workflow", config)}
    assert set(found) == {
        "toolkit_workflow.E002",
        "toolkit_workflow.E003",
        "toolkit_workflow.E004",
        "toolkit_workflow.W001",
    }
    assert "workflow.bad" in found["toolkit_workflow.E002"]
    assert "hunter2" not in found["toolkit_workflow.E002"]
    assert "workflow.named" in found["toolkit_workflow.E003"]
    assert "bad table" not in found["toolkit_workflow.E003"]
    assert "wf.example" not in found["toolkit_workflow.W001"]
    with pytest.raises(InvalidOptionsError, match="namespace"):
        Container(
            Config.load({"workflow": {"adapter": "memory", "options": {"namespace": "n" * 65}}}, {})
        ).workflow()


def test_the_admin_lists_runs_read_only(db_opened):
    from django.contrib.admin import AdminSite
    from django.test import RequestFactory

    workflow, _, _ = db_opened
    flow = register(
        WorkflowDefinition(f"wf-{uuid.uuid4().hex[:8]}", steps=[Step("a", lambda c: "x")])
    )
    secret = unique("card-")
    run_id = workflow.start(flow, {"card": secret})
    workflow.wait(run_id, 20)
    admin = WorkflowRunAdmin(WorkflowRun, AdminSite())
    request = RequestFactory().get("/admin/")
    row = WorkflowRun.objects.using(workflow.using).get(pk=run_id)
    assert admin.has_add_permission(request) is False
    assert admin.has_change_permission(request, row) is False
    assert admin.input_size(row) == len('{"card": "' + secret + '"}')
    assert admin.leased_until(row) is None
    listed = [
        str(getattr(admin, f)(row) if callable(getattr(admin, f, None)) else "")
        for f in ("created", "updated", "input_size")
    ]
    assert all(secret not in value for value in listed)
