"""The worker: pop job calls from a queue, run them, acknowledge or retry.

For each message: decode the call, find the job, run it. Success acknowledges the
message. A failure before the job's last attempt nacks it with the delay the job's
retry policy gives (:func:`~toolkit_batteries.queue.jobs.backoff.backoff_delay`);
the last failure moves it to the dead list with the error's type and message (secrets
masked). A message that is not a job call, or names a job this process does not
know, goes to the dead list at once: retrying cannot fix it, ``requeue_dead`` can once
the code is deployed.

Delivery is at least once: a worker that dies mid-job (``SIGKILL``, a lost machine)
never acknowledges, so the message reappears after the queue's ``visibility_timeout``
for another worker. Jobs should be idempotent and shorter than that timeout.

Stopping: :meth:`Worker.stop` (or SIGTERM / SIGINT when :meth:`Worker.run` installs its
handlers) lets every thread finish and acknowledge its current job, then stop popping;
a message popped after the stop request goes straight back to the queue. A second
signal exits at once (the unacknowledged job is redelivered later). An unreachable
server is logged and retried with a growing pause (0.1 s to 5 s) rather than ending
the worker.
"""

from __future__ import annotations

import logging
import os
import random
import signal
import threading
import time
import uuid
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.core.groups import RetryPolicy
from toolkit_batteries.core.redaction import redact_string

from ..base import Message, Queue, QueueClosedError
from .backoff import backoff_delay, max_attempts
from .dispatch import topic_for
from .payload import Call, PayloadError, decode
from .registry import JobRegistry, registry

__all__ = ["Delivery", "Worker", "WorkerStats", "current_delivery"]

logger = logging.getLogger("toolkit.queue.worker")

#: Longest single pop, so a stop request is seen within this many seconds.
POP_SLICE = 0.5
#: Pause after the first failed call to an unreachable server, and the longest pause.
OUTAGE_PAUSE = (0.1, 5.0)


@dataclass
class WorkerStats:
    """What a worker did, counted across its threads."""

    succeeded: int = 0
    retried: int = 0
    dead: int = 0
    #: Acknowledgements refused because the delivery had lost its lease.
    lost_leases: int = 0
    #: Calls that failed because the server could not be reached.
    outages: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def processed(self) -> int:
        """Return the number of messages handled (succeeded, retried or dead)."""
        return self.succeeded + self.retried + self.dead

    def add(self, name: str, amount: int = 1) -> None:
        """Increment counter ``name`` thread-safely."""
        with self._lock:
            setattr(self, name, getattr(self, name) + amount)


@dataclass
class Delivery:
    """The message a job is running for, as the worker handed it over.

    Why: a job whose own writes share the queue's database (a workflow step on the
    ``db`` queue) can acknowledge its message in its own transaction, so the record and
    the ack commit together and the worker's separate ack round trip goes away.
    """

    queue: Queue
    message: Message
    #: The name of the job the message calls.
    job: str = ""
    #: Set (on commit) once the job acknowledged the message itself; the worker then
    #: does not acknowledge it again.
    acked: bool = False

    def mark_acked(self) -> None:
        """Record that the job's committed transaction deleted the message."""
        self.acked = True


_delivery: ContextVar[Delivery | None] = ContextVar("toolkit_queue_delivery", default=None)


def current_delivery() -> Delivery | None:
    """Return the delivery the calling job runs for (``None`` outside a worker's call)."""
    return _delivery.get()


class Worker:
    """Run job calls from ``queue`` on ``concurrency`` threads."""

    def __init__(
        self,
        queue: Queue,
        *,
        queues: Iterable[str] = ("default",),
        concurrency: int = 1,
        jobs: JobRegistry | None = None,
        max_jobs: int | None = None,
        once: bool = False,
        stop_when_empty: bool = False,
        poll_timeout: float | None = None,
        rng: random.Random | None = None,
        name: str = "toolkit-worker",
    ) -> None:
        names = [q.strip() for q in queues if q and q.strip()]
        if not names:
            raise ValueError("a worker needs at least one queue name")
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if max_jobs is not None and max_jobs < 1:
            raise ValueError("max_jobs must be at least 1")
        self.queue = queue
        self.queues = tuple(dict.fromkeys(names))
        self.topics = tuple(topic_for(q) for q in self.queues)
        self.concurrency = concurrency
        self.jobs = jobs or registry
        #: ``once`` is one job: at most one message is handled, then the worker ends.
        self.max_jobs = 1 if once else max_jobs
        self.stop_when_empty = stop_when_empty or once
        #: Seconds without a message after which ``stop_when_empty`` ends the worker.
        self.poll_timeout = queue.poll_timeout if poll_timeout is None else poll_timeout
        self.rng = rng or random.Random()
        self.name = name
        #: Identifies this worker in a task's ``TaskResult.worker_ids``.
        self.worker_id = f"{name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.stats = WorkerStats()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._slots_lock = threading.Lock()
        self._claimed = 0
        self._turn = 0

    # ------------------------------------------------------------------ control

    @property
    def stopping(self) -> bool:
        """Tell whether a stop was requested."""
        return self._stop.is_set()

    def stop(self) -> None:
        """Ask every thread to finish its current job and stop popping."""
        self._stop.set()

    def start(self) -> None:
        """Start the threads and return; :meth:`join` waits for them."""
        if self._threads:
            raise RuntimeError("the worker is already started")
        self.queue.add_dependant(self)
        for number in range(self.concurrency):
            thread = threading.Thread(
                target=self._loop, name=f"{self.name}-{number + 1}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the threads to end; return ``True`` when all of them did."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in self._threads:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            thread.join(remaining)
        done = not any(thread.is_alive() for thread in self._threads)
        if done:
            self.queue.remove_dependant(self)
        return done

    def close(self, timeout: float = 4.5) -> None:
        """Stop and wait (bounded) for the current jobs; the queue calls this first."""
        self.stop()
        self.join(timeout)

    def run(self, *, install_signal_handlers: bool = False) -> WorkerStats:
        """Run until stopped, or until ``max_jobs`` / an empty queue ends the work.

        With ``install_signal_handlers`` (main thread only), SIGTERM and SIGINT stop the
        worker gracefully and a second one raises ``SystemExit(1)``; the previous
        handlers come back when ``run`` returns.
        """
        previous: dict[int, Any] = {}
        if install_signal_handlers and threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGINT):
                previous[signum] = signal.signal(signum, self._on_signal)
        try:
            self.start()
            while not self.join(0.2):
                pass
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        return self.stats

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self._stop.is_set():
            logger.warning("second %s: exiting without waiting", signal.Signals(signum).name)
            raise SystemExit(1)
        logger.info("%s: finishing the current jobs, then stopping", signal.Signals(signum).name)
        self.stop()

    # ------------------------------------------------------------------ the loop

    def _reserve(self) -> bool:
        """Claim the right to handle one more message under ``max_jobs``."""
        with self._slots_lock:
            if self.max_jobs is not None and self._claimed >= self.max_jobs:
                return False
            self._claimed += 1
            return True

    def _release(self) -> None:
        with self._slots_lock:
            self._claimed -= 1

    def _pop(self) -> Message | None:
        """Pop from the worker's topics, taking turns so no queue starves another."""
        if self.poll_timeout > 0:
            slice_ = min(POP_SLICE, self.poll_timeout)
        else:  # no waiting at all only makes sense when an empty queue ends the worker
            slice_ = 0.0 if self.stop_when_empty else POP_SLICE
        if len(self.topics) == 1:
            return self.queue.pop(self.topics[0], timeout=slice_)
        with self._slots_lock:
            start = self._turn
            self._turn = (self._turn + 1) % len(self.topics)
        order = self.topics[start:] + self.topics[:start]
        for topic in order:
            message = self.queue.pop(topic, timeout=0)
            if message is not None:
                return message
        return self.queue.pop(order[0], timeout=slice_)

    def _loop(self) -> None:
        idle_since = time.monotonic()
        pause = OUTAGE_PAUSE[0]
        while not self._stop.is_set():
            if not self._reserve():
                break
            try:
                message = self._pop()
            except QueueClosedError:
                self._release()
                break
            except ServiceUnavailableError as exc:
                self._release()
                self.stats.add("outages")
                logger.warning("%s; retrying in %.1fs", exc, pause)
                self._stop.wait(pause)
                pause = min(pause * 2, OUTAGE_PAUSE[1])
                continue
            pause = OUTAGE_PAUSE[0]
            if message is None:
                self._release()
                if self.stop_when_empty and time.monotonic() - idle_since >= self.poll_timeout:
                    break
                continue
            if self._stop.is_set():  # popped while stopping: give it back untouched
                self._settle(self.queue.nack, message)
                self._release()
                break
            self.handle(message)
            idle_since = time.monotonic()

    def _settle(self, operation: Any, message: Message, *args: Any) -> bool | None:
        """Acknowledge, nack or bury ``message``; log instead of raising on an outage."""
        try:
            return bool(operation(message, *args))
        except (ServiceUnavailableError, QueueClosedError) as exc:
            self.stats.add("outages")
            logger.error(
                "could not settle message %s (%s); it will be redelivered", message.id, exc
            )
            return None

    # ------------------------------------------------------------------ one message

    def handle(self, message: Message) -> str:
        """Run the job call in ``message`` and settle it; return what happened.

        The outcome is ``"succeeded"``, ``"retried"`` or ``"dead"``.
        """
        try:
            call = decode(message.body)
        except PayloadError as exc:
            return self._bury(message, f"malformed job message: {exc}")
        if call.task:
            return self._handle_task(message, call)
        job = self.jobs.get(call.name)
        if job is None:
            return self._bury(message, f'unknown job "{call.name}"')
        started = time.monotonic()
        delivery = Delivery(self.queue, message, job.name)
        token = _delivery.set(delivery)
        try:
            job.func(*call.args, **call.kwargs)
        except Exception as exc:
            return self._failed(message, job.name, job.retry, exc)
        finally:
            _delivery.reset(token)
        if delivery.acked:  # the job's own transaction deleted the message
            self.stats.add("succeeded")
            return "succeeded"
        return self._succeeded(message, job.name, started)

    def _handle_task(self, message: Message, call: Call) -> str:
        """Run a ``django_tasks`` task call (``task.enqueue`` through ``QueueBackend``).

        The task is imported by its module path (only a ``Task`` object runs), gets a
        ``TaskContext`` when it takes one, and Django's ``task_started`` /
        ``task_finished`` signals fire around it; retries follow :func:`retry_for`.
        """
        from django.utils import timezone
        from django_tasks import TaskResultStatus
        from django_tasks.base import TaskContext, TaskError
        from django_tasks.signals import task_finished, task_started
        from django_tasks.utils import get_exception_traceback, get_module_path

        from .backend import QueueBackend, resolve_task, retry_for, task_result

        task = resolve_task(call.name)
        if task is None:
            return self._bury(message, f'unknown task "{call.name}"')
        result = task_result(
            task,
            message.id,
            call.args,
            call.kwargs,
            task.backend,
            status=TaskResultStatus.RUNNING,
            attempts=message.attempts,
            worker_id=self.worker_id,
        )
        now = timezone.now()
        for name in ("enqueued_at", "started_at", "last_attempted_at"):
            object.__setattr__(result, name, message.enqueued_at if name == "enqueued_at" else now)
        task_started.send(QueueBackend, task_result=result)
        started = time.monotonic()
        try:
            if task.takes_context:
                task.call(TaskContext(task_result=result), *call.args, **call.kwargs)
            else:
                task.call(*call.args, **call.kwargs)
        except Exception as exc:
            result.errors.append(
                TaskError(
                    exception_class_path=get_module_path(type(exc)),
                    traceback=get_exception_traceback(exc),
                )
            )
            object.__setattr__(result, "status", TaskResultStatus.FAILED)
            object.__setattr__(result, "finished_at", timezone.now())
            outcome = self._failed(message, call.name, retry_for(task), exc)
            task_finished.send(QueueBackend, task_result=result)
            return outcome
        object.__setattr__(result, "status", TaskResultStatus.SUCCESSFUL)
        object.__setattr__(result, "finished_at", timezone.now())
        outcome = self._succeeded(message, call.name, started)
        task_finished.send(QueueBackend, task_result=result)
        return outcome

    def _failed(self, message: Message, name: str, policy: RetryPolicy, exc: Exception) -> str:
        """Nack a failed attempt with the policy's delay, or bury the last one."""
        reason = redact_string(f"{type(exc).__name__}: {exc}")
        allowed = max_attempts(policy)
        if message.attempts >= allowed:
            logger.error(
                "job %s failed on its last attempt (%d of %d): %s",
                name,
                message.attempts,
                allowed,
                reason,
            )
            return self._bury(message, reason)
        delay = backoff_delay(policy, message.attempts, self.rng)
        logger.warning(
            "job %s failed (attempt %d of %d), retrying in %.3fs: %s",
            name,
            message.attempts,
            allowed,
            delay,
            reason,
        )
        self._settle(self.queue.nack, message, delay)
        self.stats.add("retried")
        return "retried"

    def _succeeded(self, message: Message, name: str, started: float) -> str:
        """Acknowledge a finished call; count a lost lease (the call may run again)."""
        if self._settle(self.queue.ack, message) is False:
            self.stats.add("lost_leases")
            logger.warning(
                "job %s finished after its message's lease expired (%.1fs); it may run again",
                name,
                time.monotonic() - started,
            )
        self.stats.add("succeeded")
        return "succeeded"

    def _bury(self, message: Message, reason: str) -> str:
        self._settle(self.queue.dead, message, reason)
        self.stats.add("dead")
        return "dead"

    def __repr__(self) -> str:
        return f"<Worker queues={','.join(self.queues)} concurrency={self.concurrency}>"
