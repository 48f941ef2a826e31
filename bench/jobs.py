"""Jobs end to end: dispatch + run of a no-op job, the toolkit worker against Celery.

Both sides are a real worker process with 4 threads on this machine, fed by one
producer thread in this process, on the same Redis server:

* ours: ``@job`` calls dispatched onto the kvserver queue (db 15, a unique prefix) and
  run by ``manage.py queue_work --concurrency 4`` (acknowledged after the run: at least
  once); a second line does the same through ``@task(...).enqueue`` from django_tasks
  (the ``TASKS`` slot, ``QueueBackend``), run by the same worker;
* Celery: a plain Celery app with default settings (acknowledged before the run, 4
  prefetched per thread), ``task.delay`` onto a Redis broker (db 14), run by
  ``celery worker --pool threads -c 4``.

The job is the same no-op on each side: one ``INCR`` of a Redis counter, which is how
the run sees every call finish. Each round dispatches ``N`` calls and waits for the
counter to reach ``N``; the two sides alternate for a few rounds and the median of each
is kept, so load that comes and goes hits both alike. Target: at least 1.5x Celery.

Run alone with ``python -m bench.run jobs``; the worker processes are started and
stopped by the run, and every key it made is deleted.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from django_tasks import task

from bench.foundation import Result
from toolkit_batteries.queue.jobs import job

ROOT = Path(__file__).resolve().parents[1]
REDIS_URL = os.environ.get("TOOLKIT_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
BROKER_URL = os.environ.get("TOOLKIT_BENCH_CELERY_BROKER", "redis://127.0.0.1:6379/14")
QUEUE = os.environ.get("TOOLKIT_BENCH_JOBS_QUEUE", "bench-jobs")
THREADS = 4

_client: Any = None


def _redis() -> Any:
    """Return this process's Redis client for the counters (one pool, thread-safe)."""
    global _client
    if _client is None:
        import redis

        _client = redis.Redis.from_url(REDIS_URL)
    return _client


@job(name="bench.jobs.noop", queue=QUEUE)
def noop(counter: str) -> None:
    """Count the call: the whole job."""
    _redis().incr(counter)


@task
def task_noop(counter: str) -> None:
    """Count the call, as a django_tasks task (enqueued with ``.using(queue_name=QUEUE)``)."""
    _redis().incr(counter)


def __getattr__(name: str) -> Any:
    """``app`` is the Celery app, built on first use (``celery -A bench.jobs:app``)."""
    if name == "app":
        return _celery_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_app: Any = None


def _celery_app() -> Any:
    """Return a plain Celery app (defaults) with the no-op as task ``bench.celery.noop``."""
    global _app
    if _app is None:
        import celery

        app = celery.Celery("bench_jobs", broker=BROKER_URL, set_as_current=False)
        app.conf.update(
            task_default_queue=QUEUE,
            task_serializer="json",
            accept_content=["json"],
            worker_hijack_root_logger=False,
            broker_connection_retry_on_startup=True,
        )

        @app.task(name="bench.celery.noop", ignore_result=True, shared=False)
        def celery_noop(counter: str) -> None:
            _redis().incr(counter)

        _app = app
    return _app


# ---------------------------------------------------------------------- processes


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QUEUE_", "TOOLKIT_JOBS"))}
    env.update(
        DJANGO_SETTINGS_MODULE="tests.settings",
        PYTHONPATH=str(ROOT),
        TOOLKIT_JOBS__IMPORTS="bench.jobs",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def _start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as output:
        return subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def _wait_count(counter: str, n: int, process: subprocess.Popen[bytes], log: Path) -> None:
    client = _redis()
    deadline = time.monotonic() + 120
    while int(client.get(counter) or 0) < n:
        if process.poll() is not None:
            raise RuntimeError(f"the worker exited: {log.read_text()[-2000:]}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out: {client.get(counter)} of {n} calls ran")
        time.sleep(0.002)


def _round(send: Any, n: int, process: subprocess.Popen[bytes], log: Path) -> float:
    counter = f"bench-jobs:{uuid.uuid4().hex}"
    started = time.perf_counter()
    for _ in range(n):
        send(counter)
    _wait_count(counter, n, process, log)
    elapsed = time.perf_counter() - started
    _redis().delete(counter)
    return n / elapsed


# ---------------------------------------------------------------------- the run


class _Run:
    """One measured run of the three sides, shared by the benchmark lines."""

    def __init__(self, n: int = 3000, rounds: int = 3) -> None:
        import tempfile

        from django.test import override_settings

        from toolkit_batteries import services
        from toolkit_batteries.queue.jobs import django_task_settings, reset_dispatchers

        self.n = n
        prefix = f"bench-{uuid.uuid4().hex}:"
        toolkit = {
            "queue": {"adapter": "kvserver", "options": {"url": REDIS_URL, "prefix": prefix}}
        }
        logs = Path(tempfile.mkdtemp(prefix="bench-jobs-"))
        override = override_settings(
            TOOLKIT=toolkit,
            TOOLKIT_JOBS={"autodiscover": False},
            TASKS=django_task_settings(toolkit),
        )
        override.enable()
        ours = _start(
            [sys.executable, "manage.py", "queue_work", "--queue", QUEUE,
             "--concurrency", str(THREADS)],
            _env(QUEUE__DEFAULT__ADAPTER="kvserver", QUEUE__DEFAULT__URL=REDIS_URL,
                 QUEUE__DEFAULT__PREFIX=prefix),
            logs / "queue_work.log",
        )  # fmt: skip
        theirs = _start(
            [sys.executable, "-m", "celery", "-A", "bench.jobs:app", "worker", "--pool",
             "threads", "-c", str(THREADS), "-Q", QUEUE, "--loglevel", "WARNING",
             "--without-gossip", "--without-mingle", "--without-heartbeat"],
            _env(),
            logs / "celery.log",
        )  # fmt: skip
        app = _celery_app()
        celery_noop = app.tasks["bench.celery.noop"]
        sides = {
            "job": (noop.dispatch, ours, logs / "queue_work.log"),
            "task": (task_noop.using(queue_name=QUEUE).enqueue, ours, logs / "queue_work.log"),
            "celery": (celery_noop.delay, theirs, logs / "celery.log"),
        }
        self.rates: dict[str, list[float]] = {name: [] for name in sides}
        try:
            for send, process, log in sides.values():  # start-up and warm-up
                _round(send, 200, process, log)
            for _ in range(rounds):
                for name, (send, process, log) in sides.items():
                    self.rates[name].append(_round(send, n, process, log))
        finally:
            _stop(ours)
            _stop(theirs)
            services.close()
            override.disable()
            reset_dispatchers()
            _cleanup(prefix, app)

    def median(self, name: str) -> float:
        return statistics.median(self.rates[name])


def _cleanup(prefix: str, app: Any) -> None:
    client = _redis()
    keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
    if keys:
        client.delete(*keys)
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge(QUEUE)
    app.close()


_run: _Run | None = None


def _measured() -> _Run:
    global _run
    if _run is None:
        _run = _Run()
    return _run


def bench_jobs_vs_celery() -> Result:
    """``@job`` dispatch + run on the kvserver queue, 4 worker threads, against Celery."""
    run = _measured()
    ours, theirs = run.median("job"), run.median("celery")
    return Result(
        f"jobs @job dispatch+run kvserver, {THREADS} thr",
        ours,
        theirs,
        "jobs/s",
        ">= 1.5x Celery/Redis",
        ours >= 1.5 * theirs,
        number=",.0f",
    )


def bench_tasks_vs_celery() -> Result:
    """django_tasks ``@task`` enqueue + run through QueueBackend, against Celery."""
    run = _measured()
    ours, theirs = run.median("task"), run.median("celery")
    return Result(
        f"jobs @task enqueue+run kvserver, {THREADS} thr",
        ours,
        theirs,
        "jobs/s",
        ">= 1.5x Celery/Redis",
        ours >= 1.5 * theirs,
        number=",.0f",
    )


BENCHMARKS = (bench_jobs_vs_celery, bench_tasks_vs_celery)
