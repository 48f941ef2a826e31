"""The Celery path: registered jobs as Celery tasks, on a real worker and the real RabbitMQ.

One embedded worker (``celery.contrib.testing.worker.start_worker``, a one-thread pool
with broker heartbeats, which keeps countdowns and shutdown prompt) serves
the module, consuming a queue name of its own; the jobs report to Redis. A last test
runs ``manage.py queue_work`` with the Celery dispatcher as a real subprocess.
"""

from __future__ import annotations

import logging
import signal
import time
import uuid
from collections.abc import Iterator

import pytest
import redis
from django.conf import settings

from toolkit_batteries.queue.jobs import JobRegistry, job, load_jobs_settings
from toolkit_batteries.queue.jobs.celery_dispatch import CeleryDispatcher, build_app

from .conftest import start_worker, wait_for, worker_env

AMQP = "amqp://guest:guest@127.0.0.1:5672//"
QUEUE = f"tq-celery-{uuid.uuid4().hex[:12]}"
REDIS_URL = settings.TEST_REDIS_URL
KEY = f"t-{uuid.uuid4().hex}"

jobs = JobRegistry()


def _client() -> redis.Redis:
    return redis.Redis.from_url(REDIS_URL)


@job(name=f"tq.celery.store.{KEY}", queue=QUEUE, registry=jobs)
def store(key: str, value: str) -> str:
    _client().set(key, value)
    return value


@job(
    name=f"tq.celery.flaky.{KEY}",
    queue=QUEUE,
    retry={"max_attempts": 4, "base_delay": "200ms", "multiplier": 2},
    registry=jobs,
)
def flaky(key: str, failures: int) -> None:
    client = _client()
    run = client.rpush(key, repr(time.time()))
    if run <= failures:
        raise RuntimeError(f"failure {run}")


def delete_queue(app, name: str) -> None:
    with app.connection_for_write() as conn:
        conn.default_channel.queue_delete(name)


def make_app(**celery):
    conf = load_jobs_settings(
        {
            "dispatcher": "celery",
            "broker_url": AMQP,
            "celery": {
                "task_default_queue": QUEUE,
                "worker_enable_remote_control": False,
                **celery,
            },
        },
        {},
    )
    return build_app(conf, jobs=jobs)


@pytest.fixture(scope="module")
def celery_worker() -> Iterator[tuple]:
    """Start one embedded worker on the real broker; yield its app and a failure log."""
    from celery.contrib.testing.worker import start_worker
    from celery.signals import task_failure

    app = make_app()
    failures: list[str] = []
    # The embedded worker configures logging like a real worker does (root logger at
    # ERROR, its own handlers); put it back afterwards so later tests' caplog still works.
    root = logging.getLogger()
    saved = (root.level, list(root.handlers), logging.root.manager.disable)

    def on_failure(sender=None, **kwargs) -> None:
        failures.append(sender.name)

    task_failure.connect(on_failure, weak=False)
    try:
        with start_worker(
            app,
            pool="threads",
            perform_ping_check=False,
            shutdown_timeout=15,
            without_heartbeat=False,
        ):
            yield app, failures
    finally:
        task_failure.disconnect(on_failure)
        delete_queue(app, QUEUE)
        app.close()
        client = _client()
        keys = list(client.scan_iter(match=f"{KEY}*"))
        if keys:
            client.delete(*keys)
        root.setLevel(saved[0])
        root.handlers[:] = saved[1]
        logging.disable(saved[2])


def test_app_has_every_registered_job_as_a_task():
    app = make_app()
    assert {store.name, flaky.name} <= set(app.tasks)
    assert app.conf.task_acks_late and app.conf.worker_prefetch_multiplier == 1
    late = job(lambda: None, name=f"tq.celery.late.{KEY}", registry=jobs)
    assert late.name in app.tasks  # registered after the app was built
    jobs.unregister(late.name)
    assert app.tasks[flaky.name].max_retries == 3
    app.close()


def test_registered_job_runs_end_to_end(celery_worker):
    app, _ = celery_worker
    dispatcher = CeleryDispatcher(app, jobs=jobs)
    key = f"{KEY}:store"
    task_id = dispatcher.dispatch(store, (key, "hello from celery"))
    assert isinstance(task_id, str) and task_id
    value = wait_for(lambda: _client().get(key), 20, "the task to run")
    assert value == b"hello from celery"
    with pytest.raises(TypeError, match="JSON values"):
        dispatcher.dispatch(store, (key, {1, 2}))


def test_failing_job_retries_with_backoff_then_succeeds(celery_worker):
    app, failures = celery_worker
    key = f"{KEY}:flaky-ok"
    CeleryDispatcher(app, jobs=jobs).dispatch(flaky, (key, 2))
    runs = wait_for(
        lambda: _client().lrange(key, 0, -1)[2:] and _client().lrange(key, 0, -1), 20, "three runs"
    )
    times = [float(t) for t in runs]
    assert len(times) == 3
    # The countdowns come from the job's policy: 200 ms, then 400 ms.
    assert times[1] - times[0] >= 0.2 and times[2] - times[1] >= 0.4
    assert flaky.name not in failures


def test_job_fails_for_good_after_max_attempts(celery_worker):
    app, failures = celery_worker
    key = f"{KEY}:flaky-dead"
    CeleryDispatcher(app, jobs=jobs).dispatch(flaky, (key, 99))
    wait_for(lambda: flaky.name in failures, 30, "the final failure")
    assert _client().llen(key) == 4  # max_attempts, first included
    assert failures.count(flaky.name) == 1


def test_queue_work_command_runs_the_celery_worker(tmp_path):
    queue = f"tq-celery-{uuid.uuid4().hex[:12]}"
    key = f"{KEY}:cmd"
    env = worker_env(TOOLKIT_JOBS__DISPATCHER="celery", TOOLKIT_JOBS__BROKER_URL=AMQP)
    log = tmp_path / "celery.log"
    worker = start_worker(env, log, "--queue", queue)
    app = make_app()
    try:
        app.send_task("tq.fixture.record", args=[REDIS_URL, key, 0.0], queue=queue)
        wait_for(lambda: _client().llen(f"{key}:log") >= 2, 40, "the task on the subprocess")
        events = [raw.decode().split()[0] for raw in _client().lrange(f"{key}:log", 0, -1)]
        assert events == ["start", "done"]
        worker.send_signal(signal.SIGTERM)  # Celery's warm shutdown
        assert worker.wait(20) == 0
        assert "tq.fixture.record" in log.read_text()  # listed among the worker's tasks
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(10)
        delete_queue(app, queue)
        app.close()
        _client().delete(f"{key}:log", f"{key}:runs")


def test_dispatcher_setting_selects_celery():
    from django.test import override_settings

    from toolkit_batteries.queue.jobs import dispatcher, reset_dispatchers

    try:
        with override_settings(TOOLKIT_JOBS={"dispatcher": "celery", "broker_url": AMQP}):
            current = dispatcher()
            assert isinstance(current, CeleryDispatcher) and dispatcher() is current
    finally:
        reset_dispatchers()
    assert current.closed
