"""Faults: killed workers, a Redis server that goes away, graceful shutdown by signal.

Workers run as real ``python manage.py queue_work`` processes configured through the
environment (``QUEUE__DEFAULT__*``), against the real Redis and PostgreSQL servers; the
Redis outage uses a private ``redis-server`` on a free port that the test kills and
restarts.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from dataclasses import dataclass

import pytest
import redis

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.queue.jobs import JobRegistry, QueueDispatcher, Worker, job

from . import jobs_fixture
from .conftest import clear_queue_tables, drop_redis_prefix, start_worker, wait_for, worker_env

TOPIC = "jobs:default"
VISIBILITY = 1.0


@dataclass
class Event:
    kind: str
    pid: int
    run: int
    at: float


def events(client: redis.Redis, key: str) -> list[Event]:
    found = []
    for raw in client.lrange(f"{key}:log", 0, -1):
        kind, pid, run, at = raw.decode().split()
        found.append(Event(kind, int(pid), int(run), float(at)))
    return found


@pytest.fixture
def shared_queue(request, redis_url):
    """Return ``make(variant)``: a queue on a real server plus the env of its workers."""
    cleanups = []

    def make(variant: str, visibility: float = VISIBILITY):
        common = {"visibility_timeout": f"{visibility}s", "poll_timeout": "1s"}
        if variant == "kvserver":
            prefix = f"t-{uuid.uuid4().hex}:"
            options = {"url": redis_url, "prefix": prefix, **common}
            cleanups.append(lambda: drop_redis_prefix(redis_url, prefix))
        else:
            dsn = request.getfixturevalue("postgres_dsn")
            clear_queue_tables(dsn)
            options = {"dsn": dsn, **common}
            cleanups.append(lambda: clear_queue_tables(dsn))
        adapter = "kvserver" if variant == "kvserver" else "db"
        container = Container(Config.load({"queue": {"adapter": adapter, "options": options}}, {}))
        cleanups.insert(0, container.close)
        env = worker_env(
            QUEUE__DEFAULT__ADAPTER=adapter,
            **{f"QUEUE__DEFAULT__{key.upper()}": str(value) for key, value in options.items()},
        )
        return container.queue(), env

    yield make
    for cleanup in cleanups:
        cleanup()


def remaining(queue) -> int:
    """Count messages not yet acknowledged: waiting, in flight or dead."""
    if queue.adapter_name == "db":
        return sum(
            int(queue.database.fetch_value(f"SELECT count(*) FROM {table}"))
            for table in (queue.table, queue.dead_table)
        )
    client, base = queue.client, f"{queue.prefix}queue:{{{TOPIC}}}:"
    return sum(client.zcard(base + name) for name in ("ready", "inflight", "dead"))


def stop(process, timeout: float = 10) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    return process.wait(timeout)


@pytest.mark.parametrize("variant", ["kvserver", "db-postgres"])
def test_worker_killed_mid_job_loses_no_job(variant, shared_queue, redis_url, tmp_path):
    queue, env = shared_queue(variant)
    key = f"t-{uuid.uuid4().hex}"
    client = redis.Redis.from_url(redis_url)
    QueueDispatcher(queue).dispatch(jobs_fixture.hang_first_run, (redis_url, key, 60.0))
    workers = [start_worker(env, tmp_path / f"worker{i}.log") for i in range(2)]
    try:
        first = wait_for(lambda: events(client, key), 30, "a worker to start the job")[0]
        victim = next(w for w in workers if w.pid == first.pid)
        victim.send_signal(signal.SIGKILL)
        assert victim.wait(10) == -signal.SIGKILL
        done = wait_for(
            lambda: [e for e in events(client, key) if e.kind == "done"], 20, "redelivery"
        )[0]
        survivor = next(w for w in workers if w is not victim)
        assert (done.pid, done.run) == (survivor.pid, 2)  # the other worker, second delivery
        second_start = next(e for e in events(client, key) if e.run == 2)
        # Not before the dead worker's lease ran out.
        assert second_start.at - first.at >= VISIBILITY - 0.05
        wait_for(lambda: remaining(queue) == 0, 10, "the acknowledgement")
        assert queue.dead_messages(TOPIC) == []
        assert stop(survivor) == 0
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait(10)
        client.delete(f"{key}:log", f"{key}:runs")
        client.close()


def test_sigterm_finishes_running_jobs_and_exits_zero(shared_queue, redis_url, tmp_path):
    """``--pool processes``: the supervisor forwards SIGTERM; each child finishes its job."""
    queue, env = shared_queue("kvserver", visibility=10)
    key = f"t-{uuid.uuid4().hex}"
    client = redis.Redis.from_url(redis_url)
    log = tmp_path / "pool.log"
    dispatcher = QueueDispatcher(queue)
    for _ in range(2):  # each waits for the other to start: one job per child
        dispatcher.dispatch(jobs_fixture.record, (redis_url, key, 0.3, 2))
    supervisor = start_worker(env, log, "--pool", "processes", "--concurrency", "2")
    try:
        started = wait_for(
            lambda: [e for e in events(client, key) if e.kind == "start"][1:], 40, "two starts"
        )
        started = [e for e in events(client, key) if e.kind == "start"]
        pids = {e.pid for e in started}
        assert len(pids) == 2 and supervisor.pid not in pids  # one job per child process
        dispatcher.dispatch(jobs_fixture.record, (redis_url, key, 0.0))  # both are busy
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(15) == 0
        assert sorted((e.kind, e.run) for e in events(client, key)) == [
            ("done", 1),
            ("done", 2),
            ("start", 1),
            ("start", 2),
        ]
        for pid in pids:  # the children have exited too
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
        assert remaining(queue) == 1 and queue.size(TOPIC) == 1  # the third was never popped
        output = log.read_text()
        assert output.count("stopped after 1 job(s): 1 succeeded") == 2
        assert "lease expired" not in output
    finally:
        if supervisor.poll() is None:
            os.killpg(supervisor.pid, signal.SIGKILL)
            supervisor.wait(10)
        client.delete(f"{key}:log", f"{key}:runs")
        client.close()


# ---------------------------------------------------------------------- Redis outage


def private_queue(url: str, **options):
    container = Container(
        Config.load({"queue": {"adapter": "kvserver", "options": {"url": url, **options}}}, {})
    )
    return container, container.queue()


def test_unreachable_redis_fails_fast_and_recovers(private_redis):
    container, queue = private_queue(private_redis.url)
    queue.push("t", b"before")
    private_redis.kill()
    for call in (lambda: queue.push("t", b"x"), lambda: queue.pop("t", timeout=0.5)):
        started = time.monotonic()
        with pytest.raises(ServiceUnavailableError) as info:
            call()
        assert time.monotonic() - started < 2.0
        assert "key-value server is unreachable" in str(info.value)
        assert str(private_redis.port) not in str(info.value)
    private_redis.start()  # same port, empty (no persistence)
    queue.push("t", b"after")
    message = queue.pop("t", timeout=1)
    assert message.body == b"after" and queue.ack(message)
    container.close()


def test_worker_survives_a_redis_restart(private_redis):
    container, queue = private_queue(private_redis.url, poll_timeout="500ms")
    jobs = JobRegistry()
    ran = threading.Event()
    task = job(ran.set, name="outage.job", registry=jobs)
    worker = Worker(queue, jobs=jobs)
    worker.start()
    try:
        time.sleep(0.2)  # the worker is blocked in a pop
        private_redis.kill()
        wait_for(lambda: worker.stats.outages, 5, "the worker to notice the outage")
        private_redis.start()
        QueueDispatcher(queue, jobs=jobs).dispatch(task)
        assert ran.wait(10), "the job dispatched after the restart never ran"
    finally:
        worker.stop()
        assert worker.join(5), "the worker did not stop"
        container.close()
    assert worker.stats.succeeded == 1
