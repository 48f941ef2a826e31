"""Jobs on Django's ``TASKS`` slot: ``@task`` from django_tasks on the toolkit queue.

Every variant is the real thing: the memory queue in process, kvserver on the real Redis
(db 15, a unique key prefix per test), db on a fresh migrated SQLite file and on the
session's migrated PostgreSQL database. ``TASKS`` is derived with
``django_task_settings`` and the toolkit ``Worker`` (what ``queue_work`` runs) works the
queue; a last test runs ``manage.py queue_work`` as a child process.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
import redis
from django.db import transaction
from django.test import override_settings
from django.utils import timezone
from django_tasks import TaskResultStatus, task, task_backends
from django_tasks.exceptions import InvalidTaskError
from django_tasks.signals import task_enqueued, task_finished

from toolkit_batteries import services
from toolkit_batteries.core.errors import ConfigurationError
from toolkit_batteries.queue.jobs import (
    QueueBackend,
    ToolkitTask,
    Worker,
    django_task_settings,
    job,
    registry,
    reset_dispatchers,
    topic_for,
)
from toolkit_batteries.queue.jobs.backend import resolve_task
from toolkit_batteries.queue.jobs.payload import encode

from ..queue.conftest import clear_queue_tables, drop_redis_prefix, start_worker, worker_env
from . import tasks_fixture as fx

VARIANTS = ("memory", "kvserver", "db-sqlite", "db-postgres")


def unique(prefix: str = "k") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def use_tasks(request) -> Iterator[Callable[..., Any]]:
    """Return ``use(variant, retry=None)``: point TOOLKIT and TASKS at a fresh queue."""
    cleanups: list[Callable[[], None]] = []
    overrides: list[Any] = []

    def use(variant: str, *, retry: dict | None = None) -> Any:
        if variant == "memory":
            block: dict[str, Any] = {"adapter": "memory"}
        elif variant == "kvserver":
            url = request.getfixturevalue("redis_url")
            prefix = f"t-{uuid.uuid4().hex}:"
            block = {"adapter": "kvserver", "options": {"url": url, "prefix": prefix}}
            cleanups.append(lambda: drop_redis_prefix(url, prefix))
        elif variant == "db-sqlite":
            block = {"adapter": "db", "options": {"dsn": request.getfixturevalue("sqlite_dsn")}}
        elif variant == "db-postgres":
            dsn = request.getfixturevalue("postgres_dsn")
            clear_queue_tables(dsn)
            block = {"adapter": "db", "options": {"dsn": dsn}}
            cleanups.append(lambda: clear_queue_tables(dsn))
        else:  # pragma: no cover - a typo in a test
            raise ValueError(variant)
        toolkit = {"queue": block}
        override = override_settings(
            TOOLKIT=toolkit,
            TOOLKIT_JOBS={"autodiscover": False},
            TASKS=django_task_settings(toolkit, retry=retry),
        )
        override.enable()
        overrides.append(override)
        return services.queue()

    yield use
    services.close()
    for override in reversed(overrides):
        override.disable()
    reset_dispatchers()
    for cleanup in cleanups:
        cleanup()


def work(queue_name: str = "default", **options: Any) -> Worker:
    """Run a worker on the services queue until ``queue_name`` stays empty for 0.3 s."""
    worker = Worker(
        services.queue(), queues=[queue_name], stop_when_empty=True, poll_timeout=0.3, **options
    )
    worker.run()
    return worker


# ---------------------------------------------------------------------- settings


def test_django_task_settings_derives_the_toolkit_backend():
    toolkit = {
        "queue": {
            "default": {"adapter": "memory"},
            "jobs": {"adapter": "kvserver", "options": {"url": "redis://127.0.0.1:6379/15"}},
        }
    }
    tasks = django_task_settings(toolkit, retry={"max_attempts": 3})
    assert list(tasks) == ["default", "jobs"]
    assert tasks["default"] == {
        "BACKEND": "toolkit_batteries.queue.jobs.backend.QueueBackend",
        "QUEUES": [],
        "OPTIONS": {"queue_instance": "default", "retry": {"max_attempts": 3}},
    }
    assert tasks["jobs"]["OPTIONS"]["queue_instance"] == "jobs"
    assert django_task_settings(toolkit, queue_instance="jobs")["default"]["OPTIONS"] == {
        "queue_instance": "jobs"
    }
    with pytest.raises(ConfigurationError, match="max_attemps"):
        django_task_settings(toolkit, retry={"max_attemps": 3})
    with pytest.raises(ConfigurationError, match="nope"):
        django_task_settings(toolkit, queue_instance="nope")
    with pytest.raises(InvalidTaskError, match="OPTIONS"):
        QueueBackend("x", {"OPTIONS": {"queue_instance": "default", "retries": 1}})


def test_the_backend_declares_what_the_queue_allows(use_tasks):
    use_tasks("memory")
    backend = task_backends["default"]
    assert isinstance(backend, QueueBackend)
    assert backend.supports_defer and backend.supports_async_task
    assert not backend.supports_get_result and not backend.supports_priority
    with pytest.raises(NotImplementedError):
        backend.get_result("anything")
    with pytest.raises(InvalidTaskError, match="priority"):
        fx.add.using(priority=5)


# ---------------------------------------------------------------------- on every queue


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_task_enqueued_with_django_tasks_runs_on_the_worker(use_tasks, variant):
    queue = use_tasks(variant)
    key, other = unique(), unique()
    seen: list[Any] = []

    def on_enqueued(sender, task_result, **kwargs):
        seen.append(task_result.id)

    task_enqueued.connect(on_enqueued, weak=False)
    try:
        result = fx.add.enqueue(key, 2, b=3)
    finally:
        task_enqueued.disconnect(on_enqueued)
    assert result.status == TaskResultStatus.READY
    assert result.task is fx.add and result.backend == "default"
    assert (result.args, result.kwargs) == ([key, 2], {"b": 3})
    assert seen == [result.id]
    fx.add.using(queue_name="other").enqueue(other, 1)
    assert queue.size(topic_for("default")) == 1 and queue.size(topic_for("other")) == 1

    worker = work()
    assert fx.CALLS[key] == [5]
    assert worker.stats.succeeded == 1
    assert queue.size(topic_for("default")) == 0
    assert other not in fx.CALLS  # queue "other" is not worked by this worker
    work("other")
    assert fx.CALLS[other] == [1]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(
    ("failures", "succeeded"), [(10, 0), (2, 1)], ids=["dead-lettered", "succeeds"]
)
def test_a_failing_task_is_retried_then_succeeds_or_is_dead_lettered(
    use_tasks, variant, failures, succeeded
):
    """Three attempts: a task failing 10 times is dead-lettered, one failing twice succeeds."""
    queue = use_tasks(variant, retry={"max_attempts": 3})
    key = unique()
    fx.flaky.enqueue(key, failures)
    worker = work()
    assert fx.CALLS[key] == ["run", "run", "run"]
    stats = worker.stats
    assert (stats.retried, stats.succeeded, stats.dead) == (2, succeeded, 1 - succeeded)
    dead = queue.dead_messages(topic_for("default"))
    assert [(d.reason, d.attempts) for d in dead] == (
        [] if succeeded else [(f"RuntimeError: failure of {key}", 3)]
    )


@pytest.mark.parametrize("variant", ["db-sqlite", "db-postgres"])
def test_enqueue_inside_a_raising_atomic_block_is_gone(use_tasks, variant):
    queue = use_tasks(variant)
    alias = queue.database.alias
    gone, kept = unique(), unique()
    with pytest.raises(ZeroDivisionError), transaction.atomic(using=alias):
        fx.add.enqueue(gone, 1)
        assert queue.size(topic_for("default")) == 1  # visible inside the transaction
        1 / 0  # noqa: B018
    assert queue.size(topic_for("default")) == 0
    with transaction.atomic(using=alias):
        fx.add.enqueue(kept, 7)
    work()
    assert gone not in fx.CALLS
    assert fx.CALLS[kept] == [7]


# ---------------------------------------------------------------------- django_tasks features


def test_task_with_its_own_retry_policy(use_tasks):
    queue = use_tasks("memory", retry={"max_attempts": 5})
    made = task(retry={"max_attempts": 2})(fx.retried)
    assert isinstance(made, ToolkitTask) and made.retry.max_attempts == 2
    key = unique()
    made.enqueue(key)
    work()
    assert fx.CALLS[key] == ["run", "run"]  # its own 2 attempts, not the backend's 5
    [dead] = queue.dead_messages(topic_for("default"))
    assert dead.reason == "ValueError: always fails"
    with pytest.raises(ConfigurationError, match="max_attemps"):
        task(retry={"max_attemps": 2})(fx.retried)


def test_task_made_on_the_backend_without_retry_takes_the_backends(use_tasks):
    queue = use_tasks("kvserver", retry={"max_attempts": 3})
    made = task(fx.retried)
    assert isinstance(made, ToolkitTask) and made.retry is None
    key = unique()
    made.enqueue(key)
    work()
    assert fx.CALLS[key] == ["run", "run", "run"]
    assert len(queue.dead_messages(topic_for("default"))) == 1


def test_context_attempts_and_finished_signal(use_tasks):
    use_tasks("memory", retry={"max_attempts": 2})
    key = unique()
    finished: list[tuple[str, int]] = []

    def on_finished(sender, task_result, **kwargs):
        if task_result.args == [key]:
            finished.append((task_result.status, task_result.attempts))

    task_finished.connect(on_finished, weak=False)
    try:
        fx.with_context.enqueue(key)
        work()
    finally:
        task_finished.disconnect(on_finished)
    assert fx.CALLS[key] == [1, 2]
    assert finished == [(TaskResultStatus.FAILED, 1), (TaskResultStatus.SUCCESSFUL, 2)]


def test_async_task_runs(use_tasks):
    use_tasks("kvserver")
    key = unique()
    fx.async_add.enqueue(key, 4, 5)
    work()
    assert fx.CALLS[key] == [9]


@pytest.mark.parametrize("variant", ["memory", "kvserver"])
def test_run_after_defers_the_task(use_tasks, variant):
    queue = use_tasks(variant)
    key = unique()
    fx.add.using(run_after=timezone.now() + timedelta(seconds=60)).enqueue(key, 1)
    fx.add.using(run_after=timezone.now() - timedelta(seconds=1)).enqueue(key, 2)
    assert queue.size(topic_for("default")) == 2
    work()
    assert fx.CALLS[key] == [2]  # the deferred call is not ready yet
    assert queue.size(topic_for("default")) == 1


def test_a_message_naming_no_task_goes_dead_and_calls_nothing(use_tasks):
    queue = use_tasks("memory")
    key = unique()
    path = f"{fx.__name__}.plain_function"
    assert resolve_task(path) is None
    queue.push(topic_for("default"), encode(path, [key], task=True))
    queue.push(topic_for("default"), encode("no.such.module.task", [], task=True))
    worker = work()
    assert key not in fx.CALLS
    assert worker.stats.dead == 2
    reasons = sorted(d.reason for d in queue.dead_messages(topic_for("default")))
    assert reasons == sorted([f'unknown task "{path}"', 'unknown task "no.such.module.task"'])


# ---------------------------------------------------------------------- @job is a task too


@pytest.fixture
def jobs() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        registry.unregister(name)


def test_job_enqueue_returns_a_task_result_and_runs_with_its_retry(use_tasks, jobs):
    queue = use_tasks("kvserver")
    key = unique()
    name = unique("tq.jobs.task")
    jobs.append(name)

    @job(name=name, queue="mail", retry={"max_attempts": 2})
    def send(k: str, n: int) -> None:
        fx.record(k, n)
        if n < 0:
            raise RuntimeError("negative")

    result = send.enqueue(key, 1)
    assert result.status == TaskResultStatus.READY and result.task is send
    assert result.backend == "default" and send.backend == "default"
    assert send.queue_name == "mail" and send.module_path.endswith("send")
    assert send.call(key, 2) is None and fx.CALLS[key] == [2]  # runs now, here
    send.using(queue_name="bulk").enqueue(key, 3)
    send.enqueue(key, -1)
    worker = work("mail")
    assert fx.CALLS[key] == [2, 1, -1, -1]  # the failing call ran its 2 attempts
    assert (worker.stats.succeeded, worker.stats.retried, worker.stats.dead) == (1, 1, 1)
    work("bulk")
    assert fx.CALLS[key][-1] == 3
    assert queue.dead_messages(topic_for("mail"))[0].reason == "RuntimeError: negative"


def test_job_enqueue_without_derived_tasks_registers_the_backend(use_tasks, jobs):
    use_tasks("memory")
    name = unique("tq.jobs.notasks")
    jobs.append(name)

    @job(name=name)
    def noop() -> None:
        pass

    with override_settings(TASKS={}, TOOLKIT_JOBS={"queue_instance": "default"}):
        alias = noop.backend  # django_tasks' default alias is its immediate backend here
        assert alias.startswith("toolkit_tasks_")
        assert isinstance(task_backends[alias], QueueBackend)
        noop.enqueue()
        assert services.queue().size(topic_for("default")) == 1


# ---------------------------------------------------------------------- the real worker


def test_queue_work_runs_a_django_task_in_another_process(use_tasks, redis_url, tmp_path):
    queue = use_tasks("kvserver")
    prefix = queue.options.prefix
    key = unique(f"{prefix}done")
    fx.remember.enqueue(redis_url, key, "ran")
    env = worker_env(
        QUEUE__DEFAULT__ADAPTER="kvserver",
        QUEUE__DEFAULT__URL=redis_url,
        QUEUE__DEFAULT__PREFIX=prefix,
        QUEUE__DEFAULT__POLL_TIMEOUT="2s",
    )
    process = start_worker(env, tmp_path / "worker.log", "--once")
    try:
        assert process.wait(60) == 0, (tmp_path / "worker.log").read_text()
    finally:
        if process.poll() is None:
            process.kill()
    client = redis.Redis.from_url(redis_url)
    try:
        assert client.get(key) == b"ran"
    finally:
        client.close()
    assert queue.size(topic_for("default")) == 0


# ---------------------------------------------------------------------- the Celery path


def test_job_enqueue_goes_to_celery_when_that_is_the_dispatcher(jobs):
    from toolkit_batteries.queue.jobs import dispatcher

    queue_name = unique("tq-tasks-celery")
    name = unique("tq.jobs.celery")
    jobs.append(name)

    @job(name=name, queue=queue_name)
    def noop(n: int) -> None:
        pass

    amqp = "amqp://guest:guest@127.0.0.1:5672//"
    try:
        with override_settings(TOOLKIT_JOBS={"dispatcher": "celery", "broker_url": amqp}):
            result = noop.enqueue(1)
            assert result.status == TaskResultStatus.READY and result.backend == "celery"
            app = dispatcher().app
            with app.connection_for_write() as conn:
                declared = conn.default_channel.queue_declare(queue_name, passive=True)
                assert declared.message_count == 1
                body = conn.default_channel.basic_get(queue_name, no_ack=True)
                assert body.headers["task"] == name and body.headers["id"] == result.id
                conn.default_channel.queue_delete(queue_name)
    finally:
        reset_dispatchers()
