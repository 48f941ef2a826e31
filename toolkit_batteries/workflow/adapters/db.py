"""The ``db`` adapter (also ``sqlserver``): runs as rows of migrated tables, SQLite or PostgreSQL.

* The tables are the models of :mod:`toolkit_batteries.workflow.models`, created by
  ``manage.py migrate`` under the names the ``table`` option gives
  (:mod:`toolkit_batteries.workflow.tables`); opening checks they exist and never runs
  DDL. Rows carry the instance's ``namespace``.
* An empty ``dsn`` borrows the container's ``db`` service (the project's database, so a
  ``start`` inside the caller's ``transaction.atomic()`` commits or rolls back with the
  caller's rows, and its first job is pushed on commit); a ``dsn`` is reached through
  the ``DATABASES`` alias of that database, and ``dedicated_pool`` gives the workflow an
  alias (Django connections, and pool with ``OPTIONS["pool"]``) of its own
  (:func:`~toolkit_batteries.db.database_for`).
* A step runs inside ``transaction.atomic(using=<alias>)`` together with its record and
  the move to the next step, which is conditional on the worker's lease: writes a step
  makes through ``ctx.using`` commit exactly once.
* The claim is one raw ``UPDATE ... WHERE id = (SELECT id ... FOR NO KEY UPDATE SKIP
  LOCKED)`` on PostgreSQL (a worker skips a row another holds instead of queueing behind
  it; ``NO KEY``, the lock the ``UPDATE`` itself takes, because a signal's insert holds
  ``FOR KEY SHARE`` on its run until it commits, which plain ``FOR UPDATE`` would skip), the
  same without the locking clause on SQLite, whose write statements are serialised
  anyway. On PostgreSQL it runs as a prepared statement.
* The per-step path is raw SQL too (issue 27: the ORM's compile cost more CPU than the
  rest of a step): the run's insert (``ON CONFLICT DO NOTHING``, no savepoint), its
  updates, and a step's record, which on PostgreSQL moves the run and writes the step's
  row in one statement (``WITH moved AS (UPDATE ... RETURNING id) INSERT ... FROM
  moved``). With the ``db`` queue on the same database, that statement also pushes the
  next step's job and deletes the job's own message (the ack), and the run's insert
  pushes the first job; a step that wrote nothing else commits it alone (no ``BEGIN`` /
  ``COMMIT``). ``get``'s three reads (``wait`` polls it) are raw too; rare paths use
  the ORM. Within one step the alias's connection is looked up once
  (:meth:`DBWorkflow._advance`).
* Once the service has run a step from a topic of the ``db`` queue on its database,
  later pops of that topic claim the run the job names in the pop's own statement
  (:mod:`.pop_claim`), and the step takes that claim. A step is then 2 round trips
  (pop with claim, record with push and ack) where it was 8, against a plain job's 3
  (pop, push, ack).
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from contextlib import nullcontext
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

from django.db import transaction

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.tracing import traced

from ..base import Workflow, _delivery
from ..definition import definition
from ..records import CLAIMABLE, TERMINAL, RunRecord, RunStatus, StepRecord
from ..runstate import Expect, Fields, Job
from .memory import workflow_queue
from .pop_claim import PopClaim, step_job_prefix

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper

    from toolkit_batteries.db import Database

__all__ = ["DBWorkflow", "SQLServerWorkflow"]

F = TypeVar("F", bound=Callable[..., Any])

_RUN_FIELDS = tuple(RunRecord.__dataclass_fields__)
_STEP_FIELDS = tuple(StepRecord.__dataclass_fields__)
#: Run fields stored as JSON (the ORM's ``JSONField``): dumped, and cast on PostgreSQL.
_JSON_FIELDS = frozenset({"input", "result"})
#: Where those (and ``cancel_requested``, an integer on SQLite) sit in a run's row.
_JSON_AT = tuple(_RUN_FIELDS.index(name) for name in sorted(_JSON_FIELDS))
_CANCEL_AT = _RUN_FIELDS.index("cancel_requested")
#: A run's fields as a tuple, in ``_RUN_FIELDS`` order (one C call, not one per field).
_run_values = attrgetter(*_RUN_FIELDS)
#: The block :meth:`DBWorkflow._atomic` returns directly inside its own block (reusable).
_INSIDE = nullcontext()


def _quoted(name: str) -> str:
    """Quote a run field's column name (``current`` is a keyword on PostgreSQL)."""
    return f'"{name}"'


def _guarded(method: F) -> F:
    """Turn "cannot use the database now" into ServiceUnavailableError naming the battery."""

    @functools.wraps(method)
    def wrapper(self: DBWorkflow, *args: Any, **kwargs: Any) -> Any:
        with self._unreachable:
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


#: ``json.dumps`` with its defaults, minus the call that checks its keyword arguments.
_encode = json.JSONEncoder().encode


def _dumps(value: Any) -> str | None:
    """Return ``value`` as JSON text for a JSON column (``None`` stays SQL ``NULL``)."""
    return None if value is None else _encode(value)


def _loads(value: Any) -> Any:
    """Decode a JSON column read raw: text on both dialects (Django's loader on PostgreSQL)."""
    return json.loads(value) if type(value) is str else value


def _run_record(row: Any) -> RunRecord:
    """Build a run from a raw row of the ``_RUN_FIELDS`` columns, as the ORM would read it."""
    values = list(row)
    for at in _JSON_AT:
        if type(values[at]) is str:
            values[at] = json.loads(values[at])
    values[_CANCEL_AT] = bool(values[_CANCEL_AT])
    return RunRecord(*values)


class _Scope(threading.local):
    """What one thread's step keeps on the adapter (class attributes: each thread's defaults).

    ``conn``: the workflow alias's Django connection, looked up once per step
    (:meth:`DBWorkflow._advance`): every lookup goes through asgiref's context-local
    storage, and a step made six. ``open``: this thread is inside an outermost block
    :meth:`DBWorkflow._atomic` opened, whose last write may commit alone (``_move``).
    ``claimed``: the run the pop of the step's job already claimed (:mod:`.pop_claim`),
    for ``_claim`` to take once.
    """

    conn: Any = None
    open: bool = False
    claimed: RunRecord | None = None


class _Outermost:
    """The outermost block of :meth:`DBWorkflow._atomic`: Django's ``atomic``, marked open.

    One per adapter, entered on every step: it keeps no state of its own between enter
    and exit (Django's ``atomic`` object is reusable so, and the mark is per thread).
    """

    __slots__ = ("_block", "_scope")

    def __init__(self, scope: _Scope, block: Any) -> None:
        self._scope = scope
        self._block = block

    def __enter__(self) -> None:
        self._block.__enter__()
        self._scope.open = True

    def __exit__(self, *exc: Any) -> None:
        self._scope.open = False
        self._block.__exit__(*exc)


def _models() -> tuple[Any, Any, Any]:
    from ..models import WorkflowRun, WorkflowSignal, WorkflowStep

    return WorkflowRun, WorkflowStep, WorkflowSignal


def check_table(table: str, *, instance: str) -> None:
    """Refuse a ``table`` option other than the one the models were loaded with."""
    runs = _models()[0]._meta.db_table
    name = str(table or "").strip()
    if name and name != runs:
        raise InvalidOptionsError(
            "workflow",
            "table",
            "differs from the migrated runs table: the table name is read from the default "
            "instance's settings when Django loads its models; set it there, then migrate",
            instance=instance,
        )


@traced("advance", "start", "signal", "cancel", "get", "list")
class DBWorkflow(Workflow):
    """Runs, steps and signals as rows, written through Django's connection."""

    adapter_name = "db"

    def __init__(self, database: Database, queue: Any, **kwargs: Any) -> None:
        super().__init__(queue, **kwargs)
        self.database = database
        self.using = database.alias
        # Stateless, so one serves every call and thread (not one object per statement).
        doing = "use the workflow tables"
        self._unreachable = database.unavailable("workflow", self.instance, doing)
        self.dialect: str = database.dialect
        self._run_model, self._step_model, self._signal_model = _models()
        runs = self._run_model._meta.db_table
        self._runs_table = runs
        #: ``_update`` statements by shape (changed fields, owner, matched fields).
        self._update_sqls: dict[Any, str] = {}
        steps = self._step_model._meta.db_table
        postgres = self.dialect == "postgresql"
        lock = " FOR NO KEY UPDATE SKIP LOCKED" if postgres else ""
        # Losing a claim in a database crash only loses a lease (the worker's record is
        # then refused and the step runs again), so on PostgreSQL it skips the WAL flush.
        relax = " FROM (SELECT set_config('synchronous_commit', 'off', true)) AS relax"
        claimable = ", ".join(f"'{status}'" for status in CLAIMABLE)
        columns = ", ".join(f"{runs}.{name}" for name in _RUN_FIELDS)
        self._claim_sql = (
            f"UPDATE {runs} SET lease_owner = %s, lease_until = %s, attempt = attempt + 1, "
            f"status = CASE WHEN status = '{RunStatus.PENDING}' THEN '{RunStatus.RUNNING}' "
            f"ELSE status END, updated_at = %s{relax if postgres else ''} "
            f"WHERE id = (SELECT id FROM {runs} WHERE id = %s AND namespace = %s "
            f"AND status IN ({claimable}) AND run_after <= %s "
            f"AND (lease_owner = '' OR lease_until <= %s){{at}}{lock}) RETURNING {columns}"
        )
        self._claim_at_sql = self._claim_sql.replace(
            "{at}", f" AND current = %s AND (status = '{RunStatus.COMPENSATING}') = %s"
        )
        self._claim_sql = self._claim_sql.replace("{at}", "")
        json_param = "%s::jsonb" if postgres else "%s"
        self._insert_sql = (
            f"INSERT INTO {runs} ({', '.join(_quoted(name) for name in _RUN_FIELDS)}) "
            f"VALUES ({', '.join(self._value_slot(name) for name in _RUN_FIELDS)}) "
            "ON CONFLICT (id) DO NOTHING"
        )
        into = (
            f'INSERT INTO {steps} (run_id, "index", name, status, result, attempts, error, '
            "finished_at, compensated_at) "
        )
        upsert = (
            ' ON CONFLICT (run_id, "index") DO UPDATE SET name = excluded.name, '
            "status = excluded.status, result = excluded.result, attempts = excluded.attempts, "
            "error = excluded.error, finished_at = excluded.finished_at, "
            "compensated_at = excluded.compensated_at"
        )
        step_values = f"%s, %s, %s, {json_param}, %s, %s, %s, %s"
        self._put_step_sql = f"{into}VALUES (%s, {step_values}){upsert}"
        #: After ``WITH moved AS (UPDATE ... RETURNING id)``: the step row, only if it moved.
        #: (``WHERE true`` keeps ``ON CONFLICT`` from parsing as a join's ``ON``.)
        self._move_step_sql = (
            f"{into}SELECT moved.id, {step_values} FROM moved WHERE true{upsert} RETURNING 1"
        )
        #: Statements composed around another battery's SQL, built once each: ``_move``'s
        #: by (the update's, the push's, the ack's text), ``_insert``'s by the push's.
        self._composed: dict[Any, str] = {}
        # The reads of ``get`` (polled by ``wait``), raw for the reason the writes are.
        self._load_sql = (
            f"SELECT {columns} FROM {runs} WHERE {runs}.id = %s AND {runs}.namespace = %s"
        )
        self._steps_sql = (
            f"SELECT {', '.join(_quoted(name) for name in _STEP_FIELDS)} FROM {steps} "
            'WHERE run_id = %s ORDER BY "index"'
        )
        signals = self._signal_model._meta.db_table
        self._signals_sql = (
            f"SELECT name, payload FROM {signals} WHERE run_id = %s ORDER BY created_at, id"
        )
        self._scope = _Scope()
        prefix = step_job_prefix(self.instance) if postgres else None
        #: The claim joined to the pops of the topics this service runs steps from.
        self._pop_claim: PopClaim | None = None
        if prefix is not None:
            self._pop_claim = PopClaim(runs, columns, self.namespace, prefix)
        #: Topics whose pops the claim was offered to (joined or not: asked once).
        self._offered: set[str] = set()
        # No savepoints: a step's writes and its record commit or roll back as one.
        self._block = transaction.atomic(using=self.using, savepoint=False)
        self._outermost = _Outermost(self._scope, self._block)

    @classmethod
    def open(cls, ctx: OpenContext) -> DBWorkflow:
        """Reach the database (borrowed, by ``dsn``, or private); refuse it without the tables."""
        from toolkit_batteries.db import database_for, require_tables

        check_table(ctx.options.table, instance=ctx.instance)
        database = database_for(ctx)
        require_tables(database, *_models(), service=ctx.service, instance=ctx.instance)
        return cls(
            database, workflow_queue(ctx), instance=ctx.instance, namespace=ctx.options.namespace
        )

    # ------------------------------------------------------------------ helpers

    @property
    def _runs(self) -> Any:
        return self._run_model.objects.using(self.using).filter(namespace=self.namespace)

    @staticmethod
    def _as_record(row: Any) -> RunRecord:
        return RunRecord(**{name: getattr(row, name) for name in _RUN_FIELDS})

    def _connection(self) -> BaseDatabaseWrapper:
        """Return the alias's Django connection on this thread (the step's, when in one)."""
        conn = self._scope.conn
        return self.database.django_connection if conn is None else conn

    def _advance(self, run_id: str, workflow: str | None, at: Any) -> str:
        """Run one step (:meth:`Workflow._advance`) with the connection looked up once.

        Why: the claim, the step's block, the record and its commit hooks each looked
        the connection up (asgiref's context-local storage, nine Python calls a time).
        Kept only for this call: a connection object is the thread's until Django
        replaces it, and a closed database must refuse the next step.
        """
        self._check_open()  # a closed service says so, before its closed database would
        scope = self._scope
        outer, outer_claimed = scope.conn, scope.claimed
        scope.conn = self.database.django_connection
        delivery = _delivery.get()
        scope.claimed = None if delivery is None else self._claimed_by_pop(delivery, run_id)
        try:
            outcome = super()._advance(run_id, workflow, at)
        finally:
            scope.conn, scope.claimed = outer, outer_claimed
        if delivery is not None and workflow is not None and at is not None:
            self._join_pops(delivery, workflow)
        return outcome

    def _claimed_by_pop(self, delivery: Any, run_id: str) -> RunRecord | None:
        """Return the run the delivery's pop claimed for this step, if it claimed it."""
        row = getattr(delivery.message, "joined", None)
        if row is None:
            return None
        run = _run_record(row)
        return run if run.id == run_id and run.namespace == self.namespace else None

    def _join_pops(self, delivery: Any, workflow: str) -> None:
        """Have later pops of this delivery's topic claim runs of ``workflow`` (:mod:`.pop_claim`).

        Learnt from the steps this service runs: only topics that carry its step jobs
        pay for the match, and only workflows it has a definition of are claimed.
        """
        claim = self._pop_claim
        queue = delivery.queue
        if claim is None or not self._joins(queue):
            return
        claim.learn(workflow, definition(workflow).lease)
        topic = delivery.message.topic
        if topic not in self._offered:
            self._offered.add(topic)
            join = getattr(queue, "join_claim", None)
            if join is not None:
                join(topic, claim)

    def _atomic(self) -> Any:
        conn = self._connection()
        if not conn.in_atomic_block:
            return self._outermost
        if len(conn.atomic_blocks) == 1 and self._scope.open:
            return _INSIDE  # directly inside our own block: its end decides
        return self._block

    def _after_commit(self, action: Callable[[], Any]) -> None:
        # What transaction.on_commit does, on the connection already at hand.
        self._connection().on_commit(action)

    # ------------------------------------------------------------------ primitives

    @_guarded
    def _insert(self, run: RunRecord, then: Job | None = None) -> bool:
        """Insert the run unless its id is taken: one statement, ``ON CONFLICT DO NOTHING``.

        Why not ``create`` in a savepoint: catching the duplicate key needed its own
        ``atomic`` block, two more round trips (BEGIN and COMMIT, or a savepoint's pair in
        the caller's transaction) on every ``start`` (issue 27). With ``then`` (the ``db``
        queue on this database) the first job's push is part of it on PostgreSQL (a
        writing CTE: one durable commit instead of two), a second statement in one
        transaction on SQLite.
        """
        params = list(_run_values(run))
        for at in _JSON_AT:
            params[at] = _dumps(params[at])
        if then is None:
            return self.database.execute(self._insert_sql, params) == 1
        if self.dialect != "postgresql":
            with self._atomic():
                inserted = self.database.execute(self._insert_sql, params) == 1
                if inserted:
                    self.queue.push(*then)
            return inserted
        conn = self._connection()
        push, values = self.queue.push_from("added", *then)
        sql = self._composed.get(push)  # by the push's text: one statement per queue
        if sql is None:
            sql = f"WITH added AS ({self._insert_sql} RETURNING id), pushed AS ({push}) "
            sql = self._composed[push] = f"{sql}SELECT count(*) FROM added"
        row = self.database.fetch_one_prepared(sql, [*params, *values], connection=conn)
        if row is None or not row[0]:
            return False
        conn.on_commit(self.queue.notify_pushed)
        return True

    @_guarded
    def _load(self, run_id: str) -> RunRecord | None:
        row = self.database.fetch_one(self._load_sql, (run_id, self.namespace))
        return None if row is None else _run_record(row)

    @_guarded
    def _claim(
        self, run_id: str, owner: str, now: float, until: float, at: Any = None
    ) -> RunRecord | None:
        claimed = self._scope.claimed
        if claimed is not None:  # the pop of this step's job claimed it (.pop_claim)
            self._scope.claimed = None
            if claimed.id == run_id:
                return claimed
        params: tuple[Any, ...] = (owner, until, now, run_id, self.namespace, now, now)
        sql = self._claim_sql
        if at is not None:
            sql, params = self._claim_at_sql, (*params, int(at[0]), bool(at[1]))
        row = self.database.fetch_one_prepared(sql, params, connection=self._connection())
        return None if row is None else _run_record(row)

    @_guarded
    def _update(
        self, run_id: str, changes: Fields, *, owner: str | None = None, expect: Expect = None
    ) -> bool:
        sql, params = self._update_statement(run_id, changes, owner, expect)
        return self.database.execute(sql, params) == 1

    def _update_statement(
        self,
        run_id: str,
        changes: dict[str, Any],
        owner: str | None,
        expect: dict[str, Any] | None,
    ) -> tuple[str, list[Any]]:
        """Return the raw ``UPDATE`` of ``_update`` and its parameters.

        Why not the ORM: building and compiling a queryset cost more CPU than the rest of
        a step's bookkeeping (issue 27). The statement text depends only on which fields
        change and are matched, so it is built once per shape. The names come from this
        package's own callers (run fields), never from user input.
        """
        expect = expect or {}
        key: list[Any] = [tuple(changes), owner is not None]
        for name, value in expect.items():
            key += (name, len(value) if isinstance(value, tuple) else -1)
        shape = tuple(key)
        sql = self._update_sqls.get(shape)
        if sql is None:
            sets = ", ".join(f"{_quoted(name)} = {self._value_slot(name)}" for name in changes)
            where = ["id = %s", "namespace = %s"]
            if owner is not None:
                where.append("lease_owner = %s")
            for at in range(2, len(shape), 2):
                name, size = shape[at], shape[at + 1]
                match = "= %s" if size < 0 else f"IN ({', '.join(['%s'] * size)})"
                where.append(f"{_quoted(name)} {match}")
            sql = f"UPDATE {self._runs_table} SET {sets} WHERE {' AND '.join(where)}"
            self._update_sqls[shape] = sql
        params = [_dumps(v) if k in _JSON_FIELDS else v for k, v in changes.items()]
        params += (run_id, self.namespace) if owner is None else (run_id, self.namespace, owner)
        for value in expect.values():
            if isinstance(value, tuple):
                params += value
            else:
                params.append(value)
        return sql, params

    def _value_slot(self, name: str) -> str:
        return "%s::jsonb" if name in _JSON_FIELDS and self.dialect == "postgresql" else "%s"

    @_guarded
    def _move(
        self, run_id: str, changes: Fields, owner: str, expect: Fields, step: StepRecord, *more: Any
    ) -> bool:
        """On PostgreSQL the run's move, the step's record, the next job's push and the
        delivery's ack are one statement (a writing CTE); SQLite runs them one by one
        (in-process, no round trip to save).

        The step row, the push and the ack happen only when the ``UPDATE`` matched
        (``FROM moved``), so the answer and the effect are those of the base class's.
        When nothing was sent yet in the outermost transaction (a step that wrote nothing
        through the workflow's alias), the statement commits alone: no ``BEGIN`` and
        ``COMMIT`` round trips (issue 27).
        """
        if self.dialect != "postgresql":
            return super()._move(run_id, changes, owner, expect, step, *more)
        update, params = self._update_statement(run_id, changes, owner, expect)
        params += self._step_params(step)
        then, delivery = more or (None, None)
        push = ack = None
        if then is not None:
            push, values = self.queue.push_from("moved", *then)
            params += values
        acking = None if delivery is None else delivery.queue.ack_from(delivery.message, "moved")
        if acking is not None:
            ack, values = acking
            params += values
        parts = (update, push, ack)
        sql = self._composed.get(parts)
        if sql is None:  # built once per shape, not joined again on every step
            sql = self._composed[parts] = self._move_sql(*parts)
        conn = self._connection()
        alone = self._scope.open
        row = self.database.fetch_one_prepared(sql, params, alone=alone, connection=conn)
        if row is None or not row[0]:
            return False
        if then is not None:
            conn.on_commit(self.queue.notify_pushed)
        if ack is not None and row[1]:
            conn.on_commit(delivery.mark_acked)
        return True

    def _move_sql(self, update: str, push: str | None, ack: str | None) -> str:
        """Return ``_move``'s writing CTE around ``update`` (with the push and ack, if any)."""
        items = [f"moved AS ({update} RETURNING id)", f"step AS ({self._move_step_sql})"]
        if push is not None:
            items.append(f"pushed AS ({push})")
        if ack is not None:
            items.append(f"acked AS ({ack})")
        # One row: how many moved (0 or 1), then whether the ack matched.
        acked = ", (SELECT count(*) FROM acked)" if ack is not None else ""
        return f"WITH {', '.join(items)} SELECT count(*){acked} FROM moved"

    @_guarded
    def _park(self, run_id: str, owner: str, signal: str, changes: dict[str, Any]) -> bool:
        from django.db.models import Exists, OuterRef

        arrived = self._signal_model.objects.filter(run_id=OuterRef("pk"), name=signal)
        rows = self._runs.filter(pk=run_id, lease_owner=owner).filter(~Exists(arrived))
        return rows.update(**changes) == 1

    @_guarded
    def _put_step(self, run_id: str, step: StepRecord) -> None:
        self.database.execute(self._put_step_sql, [run_id, *self._step_params(step)])

    @staticmethod
    def _step_params(step: StepRecord) -> list[Any]:
        """Return the step's values for ``_put_step_sql`` after the run id."""
        result = _dumps(step.result)
        fields = [step.index, step.name, step.status, result, step.attempts, step.error]
        return [*fields, step.finished_at, step.compensated_at]

    @_guarded
    def _steps(self, run_id: str) -> list[StepRecord]:
        rows = self.database.fetch_all(self._steps_sql, (run_id,))
        return [StepRecord(i, n, s, _loads(r), a, e, f, c) for i, n, s, r, a, e, f, c in rows]

    @_guarded
    def _add_signal(self, run_id: str, name: str, payload: Any, now: float) -> bool:
        from django.db import IntegrityError

        try:
            with transaction.atomic(using=self.using):
                self._signal_model.objects.using(self.using).create(
                    run_id=run_id, name=name, payload=payload, created_at=now
                )
        except IntegrityError:
            return False
        return True

    @_guarded
    def _signals(self, run_id: str) -> dict[str, Any]:
        rows = self.database.fetch_all(self._signals_sql, (run_id,))
        return {name: _loads(payload) for name, payload in rows}

    @_guarded
    def _list(self, workflow: str | None, status: str | None, limit: int) -> list[RunRecord]:
        rows = self._runs
        if workflow is not None:
            rows = rows.filter(workflow=workflow)
        if status is not None:
            rows = rows.filter(status=status)
        return [self._as_record(row) for row in rows.order_by("-created_at", "-pk")[:limit]]

    @_guarded
    def _purge(self, before: float) -> int:
        doomed = self._runs.filter(status__in=TERMINAL, updated_at__lt=before)
        with transaction.atomic(using=self.using):
            ids = list(doomed.values_list("id", flat=True)[:10_000])
            self._step_model.objects.using(self.using).filter(run_id__in=ids).delete()
            self._signal_model.objects.using(self.using).filter(run_id__in=ids).delete()
            return int(self._runs.filter(id__in=ids).delete()[0])

    @_guarded
    def _claimable(self, now: float, limit: int) -> list[tuple[str, str]]:
        from django.db.models import Q

        rows = self._runs.filter(status__in=CLAIMABLE, run_after__lte=now).filter(
            Q(lease_owner="") | Q(lease_until__lte=now)
        )
        return list(rows.order_by("run_after", "pk").values_list("id", "workflow")[:limit])

    def ping(self) -> None:
        """Answer readiness with one round trip on the workflow's database."""
        self.database.ping()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return (
            f"<{type(self).__name__} workflow.{self.instance} {self.dialect} {self.using} {state}>"
        )


class SQLServerWorkflow(DBWorkflow):
    """The ``db`` adapter under the spec's ``sqlserver`` name."""

    adapter_name = "sqlserver"
