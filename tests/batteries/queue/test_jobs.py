"""Jobs: the registry, dispatching, the worker's retry and dead paths, stopping, the command."""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Iterator

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from tests.ports import free_port
from toolkit_batteries import services
from toolkit_batteries.core.errors import ConfigurationError
from toolkit_batteries.queue.jobs import (
    DispatcherClosedError,
    JobRegistry,
    JobsConfigurationError,
    PayloadError,
    QueueDispatcher,
    UnknownJobError,
    Worker,
    dispatch,
    dispatcher,
    job,
    load_jobs_settings,
    registry,
    reset_dispatchers,
    topic_for,
)
from toolkit_batteries.queue.jobs.payload import decode, encode
from toolkit_batteries.queue.jobs.worker import Delivery, current_delivery

from .conftest import unique


@pytest.fixture
def jobs() -> JobRegistry:
    """Return a private registry, so tests never collide on job names."""
    return JobRegistry()


@pytest.fixture
def memory(make_queue):
    """Return an opened memory queue with a fake clock."""
    return make_queue("memory")


@pytest.fixture
def global_names() -> Iterator[list[str]]:
    """Names of jobs registered in the process registry, unregistered afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        registry.unregister(name)


@pytest.fixture
def memory_services() -> Iterator[None]:
    """Point the services registry at a fresh memory queue."""
    with override_settings(TOOLKIT={"queue": {"adapter": "memory"}}, TOOLKIT_JOBS={}):
        yield
        services.close()
    reset_dispatchers()


# ---------------------------------------------------------------------- registry


def test_job_decorator_registers_and_stays_callable(jobs):
    @job(registry=jobs)
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    assert add(2, 3) == 5  # a direct call runs the function
    assert add.name == f"{__name__}.test_job_decorator_registers_and_stays_callable.<locals>.add"
    assert add.queue == "default" and add.retry.max_attempts == 1
    assert add.__doc__ == "Add two numbers." and add.__wrapped__.__name__ == "add"
    assert jobs[add.name] is add and add.name in jobs and len(jobs) == 1


def test_job_names_are_unique_per_function(jobs):
    def one() -> None: ...

    def two() -> None: ...

    first = job(one, name="same", registry=jobs)
    with pytest.raises(ValueError, match='"same" is already registered'):
        job(two, name="same", registry=jobs)
    assert job(one, name="same", registry=jobs) is not first  # a reload replaces it
    assert jobs["same"].func is one


@pytest.mark.parametrize("queue", ["", "has space", "x" * 101, "a/b"])
def test_job_queue_names_are_checked(jobs, queue):
    with pytest.raises(ValueError, match="queue must be"):
        job(lambda: None, name="q", queue=queue, registry=jobs)


def test_unknown_job_name(jobs):
    with pytest.raises(UnknownJobError, match='no job named "missing"'):
        jobs["missing"]


# ---------------------------------------------------------------------- payload


def test_payload_round_trip_and_refusals():
    body = encode("send", (1, "a", [True, None]), {"k": {"x": 1.5}})
    assert json.loads(body) == {
        "v": 1,
        "job": "send",
        "args": [1, "a", [True, None]],
        "kwargs": {"k": {"x": 1.5}},
    }
    call = decode(body)
    assert (call.name, call.args, call.kwargs) == (
        "send",
        (1, "a", [True, None]),
        {"k": {"x": 1.5}},
    )
    with pytest.raises(TypeError, match='job "send": arguments must be JSON values'):
        encode("send", (object(),))
    with pytest.raises(TypeError):
        encode("send", (float("nan"),))
    for bad in (b"\xff", b"[]", b"{}", b'{"job": ""}', b'{"job": "x", "args": {}}',
                b'{"v": 2, "job": "x"}', b"not json"):  # fmt: skip
        with pytest.raises(PayloadError):
            decode(bad)


# ---------------------------------------------------------------------- dispatching


def test_queue_dispatcher_pushes_json_to_the_jobs_topic(jobs, memory):
    queue, clock = memory.queue, memory.clock
    send = job(lambda to: None, name="mail.send", queue="emails", registry=jobs)
    dispatcher_ = QueueDispatcher(queue, jobs=jobs)
    message_id = dispatcher_.dispatch(send, ("ada@example.com",), {"urgent": True})
    message = queue.pop(topic_for("emails"), timeout=0)
    assert message.id == message_id and topic_for("emails") == "jobs:emails"
    assert decode(message.body).kwargs == {"urgent": True} and queue.ack(message)
    dispatcher_.dispatch("mail.send", ("by name",), delay=60)  # by name, delayed
    assert queue.pop("jobs:emails", timeout=0) is None
    clock.advance(60)
    assert decode(queue.pop("jobs:emails", timeout=0).body).args == ("by name",)
    with pytest.raises(UnknownJobError):
        dispatcher_.dispatch("mail.unknown")
    with pytest.raises(TypeError, match="JSON values"):
        dispatcher_.dispatch(send, ({1, 2},))
    assert queue.size("jobs:emails") == 0  # refused dispatches pushed nothing
    dispatcher_.close()
    with pytest.raises(DispatcherClosedError):
        dispatcher_.dispatch(send, ("late",))


def test_module_dispatch_uses_the_services_queue(memory_services, global_names):
    name = unique("job")
    global_names.append(name)
    greet = job(lambda who: None, name=name, queue="greetings")
    first = dispatch(greet, "ada")
    second = greet.dispatch("grace")
    third = greet.dispatch_in(30, "later")
    queue = services.queue()
    assert queue.size("jobs:greetings") == 3
    assert [queue.pop("jobs:greetings", timeout=0).id for _ in range(2)] == [first, second]
    assert third
    assert dispatcher() is dispatcher()  # one dispatcher per container


def test_closing_the_container_closes_the_dispatcher_before_the_queue(memory_services):
    queue = services.queue()
    current = dispatcher()
    seen: list[bool] = []
    original = current.close

    def close() -> None:
        seen.append(queue.closed)
        original()

    current.close = close  # type: ignore[method-assign]
    services.close()
    assert seen == [False] and current.closed and queue.closed
    assert dispatcher() is not current  # the next use builds a fresh one


def test_jobs_settings_layers_and_errors():
    conf = load_jobs_settings(
        {"dispatcher": "queue", "imports": ["a.jobs"]},
        {
            "TOOLKIT_JOBS__DISPATCHER": "celery",
            "TOOLKIT_JOBS__BROKER_URL": "amqp://guest:pw-s3cret@127.0.0.1:5672//",
            "TOOLKIT_JOBS__IMPORTS": "b.jobs, c.jobs",
            "UNRELATED": "x",
        },
    )
    assert conf.dispatcher == "celery" and conf.imports == ("b.jobs", "c.jobs")
    assert "pw-s3cret" not in repr(conf) and "pw-s3cret" not in conf.describe()
    assert load_jobs_settings(None, {}).dispatcher == "queue"
    with pytest.raises(JobsConfigurationError, match='"broker_url" is required'):
        load_jobs_settings({"dispatcher": "celery"}, {})
    with pytest.raises(JobsConfigurationError, match='did you mean "imports"'):
        load_jobs_settings({"import": []}, {})
    with pytest.raises(JobsConfigurationError, match='"autodiscover" must be a boolean'):
        load_jobs_settings({"autodiscover": "maybe"}, {})
    with pytest.raises(ConfigurationError):
        load_jobs_settings(["not", "a", "dict"], {})  # type: ignore[arg-type]


# ---------------------------------------------------------------------- the worker


def test_worker_runs_the_job_and_acknowledges(jobs, memory):
    queue = memory.queue
    calls: list[tuple] = []
    work = job(lambda *a, **k: calls.append((a, k)), name="w.ok", registry=jobs)
    QueueDispatcher(queue, jobs=jobs).dispatch(work, (1, [2]), {"x": "y"})
    worker = Worker(queue, jobs=jobs)
    assert worker.handle(queue.pop("jobs:default", timeout=0)) == "succeeded"
    assert calls == [((1, [2]), {"x": "y"})]
    memory.clock.advance(3600)
    assert queue.pop("jobs:default", timeout=0) is None
    assert (worker.stats.succeeded, worker.stats.processed) == (1, 1)


def test_a_job_sees_its_delivery_and_may_acknowledge_it_itself(jobs, memory):
    """A job that acknowledged its own message (a workflow step, in its transaction)
    marks the delivery; the worker then sends no second ack, which a lost lease would
    have refused and counted."""
    queue = memory.queue
    seen: list[Delivery | None] = []

    def own_ack(settle: bool) -> None:
        delivery = current_delivery()
        seen.append(delivery)
        if settle and delivery is not None and delivery.queue.ack(delivery.message):
            delivery.mark_acked()

    work = job(own_ack, name="w.own", registry=jobs)
    QueueDispatcher(queue, jobs=jobs).dispatch(work, (True,))
    QueueDispatcher(queue, jobs=jobs).dispatch(work, (False,))
    worker = Worker(queue, jobs=jobs)
    first, second = (queue.pop("jobs:default", timeout=0) for _ in range(2))
    assert worker.handle(first) == worker.handle(second) == "succeeded"
    assert [(d.message.id, d.job, d.acked) for d in seen] == [
        (first.id, "w.own", True),
        (second.id, "w.own", False),  # acknowledged by the worker afterwards
    ]
    assert current_delivery() is None  # only while the job runs
    memory.clock.advance(3600)
    assert queue.pop("jobs:default", timeout=0) is None
    assert (worker.stats.succeeded, worker.stats.lost_leases) == (2, 0)


def test_failures_retry_with_backoff_then_go_dead(jobs, memory):
    queue, clock = memory.queue, memory.clock
    attempts: list[int] = []

    def flaky() -> None:
        attempts.append(len(attempts) + 1)
        raise RuntimeError("boom at postgres://app:pw-s3cret@db/app")

    retry = {"MaxAttempts": 3, "BaseDelay": "10s", "Multiplier": 2}
    task = job(flaky, name="w.flaky", retry=retry, registry=jobs)
    QueueDispatcher(queue, jobs=jobs).dispatch(task)
    worker = Worker(queue, jobs=jobs)
    outcomes = []
    for wait in (10, 20):  # the backoff after attempts 1 and 2
        outcomes.append(worker.handle(queue.pop("jobs:default", timeout=0)))
        assert queue.size("jobs:default") == 1  # back, but delayed
        clock.advance(wait - 0.01)
        assert queue.pop("jobs:default", timeout=0) is None
        clock.advance(0.01)
    last = queue.pop("jobs:default", timeout=0)
    assert last.attempts == 3
    outcomes.append(worker.handle(last))
    assert outcomes == ["retried", "retried", "dead"] and attempts == [1, 2, 3]
    clock.advance(3600)
    assert queue.pop("jobs:default", timeout=0) is None
    (dead,) = queue.dead_messages("jobs:default")
    assert dead.attempts == 3 and dead.reason.startswith("RuntimeError: boom at postgres://")
    assert "pw-s3cret" not in dead.reason
    assert (worker.stats.retried, worker.stats.dead) == (2, 1)
    # requeue_dead gives the job a fresh set of attempts.
    assert queue.requeue_dead("jobs:default") == 1
    assert queue.pop("jobs:default", timeout=0).attempts == 1


def test_worker_loop_retries_until_success_in_real_time(jobs, memory):
    queue = memory.queue
    queue.clock = time.time
    runs: list[float] = []

    def third_time_lucky() -> None:
        runs.append(time.monotonic())
        if len(runs) < 3:
            raise ValueError("not yet")

    retry = {"max_attempts": 5, "base_delay": "50ms", "multiplier": 2}
    QueueDispatcher(queue, jobs=jobs).dispatch(
        job(third_time_lucky, name="w.l", retry=retry, registry=jobs)
    )
    stats = Worker(queue, jobs=jobs, stop_when_empty=True, poll_timeout=0.3).run()
    assert (stats.retried, stats.succeeded, stats.dead) == (2, 1, 0)
    assert runs[1] - runs[0] >= 0.05 and runs[2] - runs[1] >= 0.1
    assert queue.size("jobs:default") == 0


def test_unknown_jobs_and_malformed_messages_go_dead_at_once(jobs, memory):
    queue = memory.queue
    queue.push("jobs:default", encode("nobody.knows", ()))
    queue.push("jobs:default", b"\x00garbage")
    worker = Worker(queue, jobs=jobs)
    assert worker.handle(queue.pop("jobs:default", timeout=0)) == "dead"
    assert worker.handle(queue.pop("jobs:default", timeout=0)) == "dead"
    reasons = [m.reason for m in queue.dead_messages("jobs:default")]
    assert reasons == ['unknown job "nobody.knows"', "malformed job message: the body is not JSON"]


def test_concurrency_runs_jobs_in_parallel_threads(jobs, memory):
    queue = memory.queue
    barrier = threading.Barrier(4, timeout=5)
    threads: set[str] = set()

    def meet() -> None:
        threads.add(threading.current_thread().name)
        barrier.wait()  # only passes if four jobs run at the same time

    task = job(meet, name="w.meet", registry=jobs)
    for _ in range(4):
        QueueDispatcher(queue, jobs=jobs).dispatch(task)
    stats = Worker(queue, jobs=jobs, concurrency=4, max_jobs=4).run()
    assert stats.succeeded == 4 and len(threads) == 4


def test_max_jobs_and_once(jobs, memory):
    queue = memory.queue
    task = job(lambda: None, name="w.n", registry=jobs)
    for _ in range(5):
        QueueDispatcher(queue, jobs=jobs).dispatch(task)
    assert Worker(queue, jobs=jobs, max_jobs=2, concurrency=3).run().succeeded == 2
    assert queue.size("jobs:default") == 3
    assert Worker(queue, jobs=jobs, once=True).run().succeeded == 1
    assert queue.size("jobs:default") == 2
    other = Worker(queue, queues=["empty"], jobs=jobs, once=True, poll_timeout=0.2)
    started = time.monotonic()
    assert other.run().processed == 0  # --once on an empty queue waits poll_timeout
    assert 0.15 <= time.monotonic() - started < 2


def test_worker_takes_turns_between_queues(jobs, memory):
    queue = memory.queue
    done: list[str] = []
    a = job(lambda: done.append("a"), name="w.a", queue="a", registry=jobs)
    b = job(lambda: done.append("b"), name="w.b", queue="b", registry=jobs)
    dispatcher_ = QueueDispatcher(queue, jobs=jobs)
    for _ in range(3):
        dispatcher_.dispatch(a)
        dispatcher_.dispatch(b)
    Worker(queue, queues=["a", "b"], jobs=jobs, max_jobs=6).run()
    assert sorted(done) == ["a"] * 3 + ["b"] * 3
    assert done[:2] in (["a", "b"], ["b", "a"])  # neither queue waits for the other


def test_stop_finishes_the_current_job_and_pops_no_more(jobs, memory):
    queue = memory.queue
    queue.clock = time.time
    started, release = threading.Event(), threading.Event()

    def slow() -> None:
        started.set()
        assert release.wait(5)

    task = job(slow, name="w.slow", registry=jobs)
    for _ in range(2):
        QueueDispatcher(queue, jobs=jobs).dispatch(task)
    worker = Worker(queue, jobs=jobs)
    worker.start()
    assert started.wait(5)
    worker.stop()
    release.set()
    assert worker.join(5)
    assert worker.stats.succeeded == 1 and worker.stats.lost_leases == 0
    assert queue.size("jobs:default") == 1  # the second job is still waiting


def test_container_close_waits_for_the_running_job_before_closing_the_queue(make_queue, jobs):
    opened = make_queue("memory")
    queue = opened.queue
    queue.clock = time.time
    started = threading.Event()
    finished: list[bool] = []

    def slow() -> None:
        started.set()
        time.sleep(0.3)
        finished.append(queue.closed)

    QueueDispatcher(queue, jobs=jobs).dispatch(job(slow, name="w.close", registry=jobs))
    worker = Worker(queue, jobs=jobs)
    worker.start()
    assert started.wait(5)
    opened.container.close()  # closes the worker (a dependant) first, then the queue
    assert finished == [False] and queue.closed
    assert worker.stats.succeeded == 1 and worker.stats.outages == 0
    assert worker.join(0)


# ---------------------------------------------------------------------- the command


def run_command(*args: str) -> str:
    out = io.StringIO()
    call_command("queue_work", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_queue_work_command_once_and_max_jobs(memory_services, global_names):
    name = unique("job")
    global_names.append(name)
    done: list[int] = []
    task = job(done.append, name=name)
    for i in range(4):
        task.dispatch(i)
    output = run_command("--once")
    assert done == [0] and "stopped after 1 job(s): 1 succeeded" in output
    output = run_command("--max-jobs", "2", "--concurrency", "2")
    assert sorted(done) == [0, 1, 2] and "2 job(s)" in output
    with override_settings(
        TOOLKIT={"queue": {"adapter": "memory", "options": {"poll_timeout": "200ms"}}}
    ):
        task.dispatch(9)
        output = run_command("--stop-when-empty", "--queue", "default,other")
        assert done[-1] == 9 and "queues default, other" in output


def test_queue_work_command_exit_codes(memory_services):
    with pytest.raises(CommandError, match="must be at least 1"):
        run_command("--concurrency", "0")
    with override_settings(TOOLKIT_JOBS={"dispatcher": "nope"}):
        with pytest.raises(CommandError) as info:
            run_command("--once")
        assert info.value.returncode == 3
    with override_settings(TOOLKIT_JOBS={"dispatcher": "celery", "broker_url": "memory://"}):
        with pytest.raises(CommandError) as info:
            run_command("--once")
        assert info.value.returncode == 2
    port = free_port()  # nothing listens on it
    with override_settings(
        TOOLKIT={"queue": {"adapter": "kvserver", "options": {"addr": f"127.0.0.1:{port}"}}}
    ):
        with pytest.raises(CommandError) as info:
            run_command("--once")
        assert info.value.returncode == 5
