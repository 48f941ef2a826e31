"""The resilience service: one policy wrapping calls in bulkhead, timeout, retry, breaker.

::

    policy = services.resilience()
    rates = policy.call(fetch_rates, "EUR")                # fetch_rates("EUR"), guarded

    @resilient("payments")                                 # the "payments" instance
    def charge(order): ...

The layers, outermost first, exactly as the spec orders them:

1. **bulkhead**: at most ``bulkhead.max_concurrent`` calls at once in this process
   (:mod:`.bulkhead`); waiting for a slot does not count against the timeout.
2. **timeout**: ``timeout`` bounds the whole operation, every attempt and every backoff
   wait included. Each attempt of a synchronous function runs on a worker thread of the
   policy while the caller waits at most until the deadline; at the deadline the caller
   gets :class:`OperationTimeoutError` and the attempt is **abandoned**, because Python
   cannot stop a thread: it runs on to its end, its result is discarded, and it keeps
   its bulkhead slot until it really ends (so the bulkhead bounds real concurrency).
   Context variables are copied to the worker; thread-locals (Django's database
   connections) are not shared, so do not wrap ORM work in a policy. A negative
   ``timeout`` turns the bound off and runs attempts inline, on the caller's thread.
   A backoff wait that would end past the deadline is not started: the timeout error is
   raised at once, chained to the last attempt's error.
3. **retry**: up to ``retry.MaxAttempts`` attempts with :func:`.backoff.backoff` delays.
   Every exception is retried except the policy's own (breaker open, bulkhead full,
   timeout), unless a ``retry_if`` predicate says otherwise.
4. **circuit breaker** (``breaker.enabled``): each attempt asks the breaker first and
   reports its outcome after (:mod:`.breaker`); an open breaker fails the call at once
   with :class:`BreakerOpenError`, without retrying.

Clock, sleep and random source are injectable, so tests run the arithmetic without
waiting.

**Coroutines.** ``policy.call(async_fn, ...)`` (or :meth:`Policy.acall`) returns an
awaitable running the same layers on the event loop: the bulkhead wait and the breaker
store (possibly a network round trip) run in a worker thread, the timeout cancels the
attempt (a coroutine, unlike a thread, can be stopped, so nothing is abandoned), and
the backoff waits with ``asyncio.sleep``. :meth:`Policy.decorate` and :func:`resilient`
keep an ``async def`` a coroutine function.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, ClassVar, ParamSpec, TypeVar

from asgiref.sync import iscoroutinefunction

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.groups import ResilienceRetryPolicy
from toolkit_batteries.core.outbound.retry_after import MAX_RETRY_AFTER

from .backoff import Random, backoff, max_attempts
from .breaker import BreakerConfig, BreakerStore, Permit, Refused, breaker_config
from .bulkhead import Bulkhead, Slot
from .errors import (
    BreakerOpenError,
    OperationTimeoutError,
    PolicyClosedError,
    ResilienceError,
)

__all__ = ["Policy", "PolicySettings", "resilient", "settings_from_options"]

logger = logging.getLogger("toolkit.resilience")

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class PolicySettings:
    """Validated options: seconds as floats, the retry policy, the breaker (or None)."""

    name: str
    timeout: float
    retry: Any
    breaker: BreakerConfig | None
    max_concurrent: int
    max_queue: int
    max_wait: float


def settings_from_options(options: Any, *, instance: str = "default") -> PolicySettings:
    """Validate a ``ResilienceOptions``; raise :class:`InvalidOptionsError` naming the field."""

    def invalid(name: str, reason: str) -> InvalidOptionsError:
        return InvalidOptionsError("resilience", name, reason, instance=instance)

    bulkhead = options.bulkhead
    if bulkhead.max_concurrent < 1:
        raise invalid("bulkhead.max_concurrent", "must be at least 1")
    retry = options.retry if options.retry is not None else ResilienceRetryPolicy()
    if retry.base_delay.total_seconds() < 0 or retry.max_delay.total_seconds() < 0:
        raise invalid("retry", "delays must not be negative")
    if retry.jitter_max.total_seconds() < 0:
        raise invalid("retry.jitter_max", "must not be negative")
    breaker = (
        breaker_config(options.breaker, instance=instance) if options.breaker.enabled else None
    )
    return PolicySettings(
        name=options.name or instance,
        timeout=options.timeout.total_seconds(),
        retry=retry,
        breaker=breaker,
        max_concurrent=bulkhead.max_concurrent,
        max_queue=bulkhead.max_queue,
        max_wait=bulkhead.max_wait.total_seconds(),
    )


def _retryable(exc: BaseException) -> bool:
    return not isinstance(exc, ResilienceError)


def _always_failure(exc: BaseException) -> bool:
    return True


class _Shared:
    """What a policy and its :meth:`Policy.derive` copies share."""

    def __init__(self, settings: PolicySettings, instance: str) -> None:
        self.bulkhead = Bulkhead(
            settings.max_concurrent, settings.max_queue, settings.max_wait, instance=instance
        )
        self.executor: ThreadPoolExecutor | None = None
        self.lock = threading.Lock()
        self.closed = False
        self.counts = dict.fromkeys(
            (
                "calls",
                "successes",
                "failures",
                "retries",
                "timeouts",
                "abandoned",
                "breaker_rejections",
                "bulkhead_rejections",
            ),
            0,
        )

    def count(self, name: str) -> None:
        with self.lock:
            self.counts[name] += 1

    def submit(self, max_workers: int, fn: Callable[[], Any]) -> Any:
        with self.lock:
            if self.executor is None:
                self.executor = ThreadPoolExecutor(
                    max_workers=max_workers, thread_name_prefix="toolkit-resilience"
                )
            executor = self.executor
        return executor.submit(fn)


class Policy(Service):
    """Bulkhead -> timeout -> retry -> circuit breaker around any call."""

    service_name: ClassVar[str] = "resilience"

    def __init__(
        self,
        settings: PolicySettings,
        store: BreakerStore | None,
        *,
        instance: str = "default",
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        rng: Random | None = None,
        store_uses_clock: bool = True,
    ) -> None:
        """Build a policy; ``store`` keeps breaker state (``None`` without a breaker).

        ``clock`` (seconds), ``sleep`` and ``rng`` are injectable for tests. With
        ``store_uses_clock`` false the store keeps its own time (the server's).
        """
        self.settings = settings
        self.instance = instance
        self._store = store if settings.breaker is not None else None
        self._clock = clock
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()
        self._store_uses_clock = store_uses_clock
        self._retry_if: Callable[[BaseException], bool] = _retryable
        self._failure_if: Callable[[BaseException], bool] = _always_failure
        self._shared = _Shared(settings, instance)

    def __repr__(self) -> str:
        breaker = "breaker" if self._store is not None else "no breaker"
        return (
            f"<{type(self).__name__} {self.adapter_name} resilience.{self.instance} "
            f"{self.name!r} timeout={self.settings.timeout:g}s "
            f"attempts={max_attempts(self.settings.retry)} {breaker}>"
        )

    @property
    def name(self) -> str:
        """Return the breaker name: ``name`` from the options, else the instance name."""
        return self.settings.name

    @property
    def bulkhead(self) -> Bulkhead:
        """Return the bulkhead shared by this policy and its derived copies."""
        return self._shared.bulkhead

    def derive(
        self,
        name: str | None = None,
        *,
        retry_if: Callable[[BaseException], bool] | None = None,
        failure_if: Callable[[BaseException], bool] | None = None,
    ) -> Policy:
        """Return a copy with its own breaker (``<name>.<suffix>``) and/or predicates.

        ``retry_if(exc)`` says whether an attempt's error is worth another attempt (the
        policy's own errors never are); ``failure_if(exc)`` whether it counts against the
        breaker (a 404 may not). The bulkhead, the worker threads and the counters stay
        shared with this policy.
        """
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        if name:
            twin.settings = _replace_name(self.settings, f"{self.settings.name}.{name}")
        if retry_if is not None:
            twin._retry_if = lambda exc: _retryable(exc) and retry_if(exc)
        if failure_if is not None:
            twin._failure_if = failure_if
        return twin

    # ------------------------------------------------------------------ calling

    def call(self, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
        """Run ``fn(*args, **kwargs)`` under the policy and return its result.

        Raises the last attempt's own error when retries run out, or
        :class:`BulkheadFullError`, :class:`OperationTimeoutError` (chained to the last
        error), :class:`BreakerOpenError`, :class:`PolicyClosedError`. For a coroutine
        function, return the awaitable of :meth:`acall` instead.
        """
        if iscoroutinefunction(fn):
            return self.acall(fn, *args, **kwargs)  # type: ignore[return-value]
        shared = self._shared
        if shared.closed:
            raise PolicyClosedError(self.instance)
        shared.count("calls")
        try:
            slot = shared.bulkhead.acquire()
        except ResilienceError:
            shared.count("bulkhead_rejections")
            raise
        try:
            result = self._attempts(fn, args, kwargs, slot)
        except BaseException:
            shared.count("failures")
            raise
        finally:
            slot.release()  # a no-op when an abandoned attempt took the slot over
        shared.count("successes")
        return result

    async def acall(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """Await ``fn(*args, **kwargs)`` (a coroutine function) under the policy.

        The same layers and errors as :meth:`call`; a timed-out attempt is cancelled.
        """
        shared = self._shared
        if shared.closed:
            raise PolicyClosedError(self.instance)
        shared.count("calls")
        try:
            slot = await asyncio.to_thread(shared.bulkhead.acquire)
        except ResilienceError:
            shared.count("bulkhead_rejections")
            raise
        try:
            result = await self._async_attempts(fn, args, kwargs)
        except BaseException:
            shared.count("failures")
            raise
        finally:
            slot.release()
        shared.count("successes")
        return result

    async def _async_attempts(self, fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
        run = _Schedule(self)
        while True:
            run.next()
            try:
                permit = await asyncio.to_thread(self._acquire)
            except BreakerOpenError as refused:
                raise refused from run.last
            try:
                if run.deadline is None:
                    result = await fn(*args, **kwargs)
                else:
                    async with asyncio.timeout(max(0.0, run.deadline - self._clock())):
                        result = await fn(*args, **kwargs)
            except TimeoutError as exc:
                if run.deadline is None or self._clock() < run.deadline:
                    outcome: BaseException = exc  # the callable's own TimeoutError
                else:
                    await asyncio.to_thread(self._record, permit, False)
                    raise self._timed_out(run.attempt) from run.last
            except Exception as exc:
                outcome = exc
            else:
                await asyncio.to_thread(self._record, permit, True)
                return result
            await asyncio.to_thread(self._record, permit, not self._failure_if(outcome))
            delay = run.delay_after(outcome)
            if delay > 0:
                if self._sleep is time.sleep:
                    await asyncio.sleep(delay)
                else:  # an injected (test) sleep
                    self._sleep(delay)

    def decorate(self, fn: Callable[P, R]) -> Callable[P, R]:
        """Return ``fn`` wrapped so that every call goes through :meth:`call`."""
        if iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def aguarded(*args: Any, **kwargs: Any) -> Any:
                return await self.acall(fn, *args, **kwargs)

            return aguarded  # type: ignore[return-value]

        @functools.wraps(fn)
        def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
            return self.call(fn, *args, **kwargs)

        return guarded

    def _attempts(self, fn: Callable[..., R], args: Any, kwargs: Any, slot: Slot) -> R:
        run = _Schedule(self)
        while True:
            run.next()
            try:
                permit = self._acquire()
            except BreakerOpenError as refused:
                raise refused from run.last
            try:
                if run.deadline is None:
                    result = fn(*args, **kwargs)
                else:
                    result = self._run_bounded(fn, args, kwargs, run.deadline, slot, run.attempt)
            except _Abandoned:
                self._record(permit, False)
                raise self._timed_out(run.attempt) from run.last
            except Exception as exc:
                self._record(permit, not self._failure_if(exc))
                delay = run.delay_after(exc)
                if delay > 0:
                    self._sleep(delay)
                continue
            self._record(permit, True)
            return result

    def _run_bounded(
        self,
        fn: Callable[..., R],
        args: Any,
        kwargs: Any,
        deadline: float,
        slot: Slot,
        attempt: int,
    ) -> R:
        context = contextvars.copy_context()
        future = self._shared.submit(
            self.settings.max_concurrent, lambda: context.run(fn, *args, **kwargs)
        )
        try:
            return future.result(timeout=max(0.0, deadline - self._clock()))
        except FutureTimeout:
            if future.cancel():  # never started (every worker busy): nothing to abandon
                raise _Abandoned from None
            self._shared.count("abandoned")
            self._take_over(slot, future)
            logger.warning(
                "resilience.%s: %r attempt %d ran past the timeout; abandoned (it keeps "
                "running and holds its bulkhead slot until it ends)",
                self.instance,
                self.name,
                attempt,
            )
            raise _Abandoned from None

    @staticmethod
    def _take_over(slot: Slot, future: Any) -> None:
        """Move the slot's release from the caller to the abandoned attempt's end."""
        twin = Slot(slot._bulkhead)
        slot._released = True  # the caller's release becomes a no-op
        future.add_done_callback(lambda _: twin.release())

    def _timed_out(self, attempts: int) -> OperationTimeoutError:
        self._shared.count("timeouts")
        return OperationTimeoutError(self.instance, self.settings.timeout, attempts)

    # ------------------------------------------------------------------ breaker

    def _now_ms(self) -> float | None:
        return self._clock() * 1000 if self._store_uses_clock else None

    def _acquire(self) -> Permit | None:
        if self._store is None:
            return None
        try:
            return self._store.acquire(self.name, self._now_ms())
        except Refused as refused:
            self._shared.count("breaker_rejections")
            raise BreakerOpenError(
                self.instance, self.name, refused.retry_after_ms / 1000, refused.state
            ) from None

    def _record(self, permit: Permit | None, success: bool) -> None:
        if permit is not None and self._store is not None:
            self._store.record(self.name, permit, success, self._now_ms())

    def breaker_state(self) -> str:
        """Return ``closed``, ``open`` or ``half-open`` (``closed`` without a breaker)."""
        if self._store is None:
            return "closed"
        return self._store.state(self.name, self._now_ms())

    def reset_breaker(self) -> None:
        """Close the breaker and forget its counts (an operator's override)."""
        if self._store is not None:
            self._store.reset(self.name)

    # ------------------------------------------------------------------ lifecycle

    def stats(self) -> dict[str, int]:
        """Return counters since open (shared with derived copies).

        ``calls``, ``successes``, ``failures``, ``retries``, ``timeouts``, ``abandoned``,
        ``breaker_rejections``, ``bulkhead_rejections``, and the bulkhead's ``active``
        and ``waiting`` right now.
        """
        shared = self._shared
        with shared.lock:
            counts = dict(shared.counts)
        return {**counts, "active": shared.bulkhead.active, "waiting": shared.bulkhead.waiting}

    def close(self) -> None:
        """Refuse new calls and let the worker threads end (abandoned ones are not waited)."""
        shared = self._shared
        with shared.lock:
            shared.closed = True
            executor, shared.executor = shared.executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


class _Schedule:
    """One call's attempts under a policy: its deadline, its budget, the retry decision.

    :meth:`Policy.call` and :meth:`Policy.acall` differ in how they run an attempt and
    wait (a worker thread, or ``asyncio``); when to stop, what to raise and how long to
    wait before the next attempt are the same, and live here once.
    """

    __slots__ = ("attempt", "deadline", "last", "limit", "policy", "retry")

    def __init__(self, policy: Policy) -> None:
        settings = policy.settings
        self.policy = policy
        self.retry = settings.retry
        timeout = settings.timeout
        #: The call's deadline on the policy's clock; ``None``: no timeout.
        self.deadline = policy._clock() + timeout if timeout > 0 else None
        self.limit = max_attempts(settings.retry)
        self.attempt = 0
        #: The failure of the previous attempt (the cause of a later timeout).
        self.last: BaseException | None = None

    def next(self) -> None:
        """Count the next attempt; raise ``OperationTimeoutError`` if the deadline passed."""
        self.attempt += 1
        if self.deadline is not None and self.policy._clock() >= self.deadline:
            raise self.policy._timed_out(self.attempt - 1) from self.last

    def delay_after(self, outcome: BaseException) -> float:
        """Return the wait before retrying after ``outcome``, or raise.

        ``outcome`` itself is raised when the budget is spent or it is not retryable;
        ``OperationTimeoutError`` when the wait would reach the deadline.
        """
        policy = self.policy
        if self.attempt >= self.limit or not policy._retry_if(outcome):
            raise outcome
        delay = _wait_before_retry(self.attempt, self.retry, policy._rng, outcome)
        if self.deadline is not None and policy._clock() + delay >= self.deadline:
            raise policy._timed_out(self.attempt) from outcome
        policy._shared.count("retries")
        self.last = outcome
        return delay


class _Abandoned(Exception):
    """Internal: an attempt ran past the deadline."""


def _replace_name(settings: PolicySettings, name: str) -> PolicySettings:
    from dataclasses import replace

    return replace(settings, name=name)


def resilient(
    instance: str = "default",
    *,
    name: str | None = None,
    retry_if: Callable[[BaseException], bool] | None = None,
    failure_if: Callable[[BaseException], bool] | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a function so each call runs under ``services.resilience(instance)``.

    The policy is looked up at call time (so settings changes and tests apply);
    ``name``, ``retry_if`` and ``failure_if`` are those of :meth:`Policy.derive`.
    """

    def decorator(fn: Callable[P, R]) -> Callable[P, R]:
        def policy() -> Policy:
            from toolkit_batteries import services

            found = services.resilience(instance)
            if name or retry_if or failure_if:
                found = found.derive(name, retry_if=retry_if, failure_if=failure_if)
            return found

        if iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def aguarded(*args: Any, **kwargs: Any) -> Any:
                return await policy().acall(fn, *args, **kwargs)

            return aguarded  # type: ignore[return-value]

        @functools.wraps(fn)
        def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
            return policy().call(fn, *args, **kwargs)

        return guarded

    return decorator


def _wait_before_retry(attempt: int, retry: Any, rng: Any, error: BaseException) -> float:
    """Return the backoff delay, or longer when the error carries the provider's wish.

    An error with a positive ``retry_after`` (seconds, read from a ``Retry-After`` header
    by the adapter that raised it) is never retried sooner than that, up to
    :data:`~toolkit_batteries.core.outbound.retry_after.MAX_RETRY_AFTER`.
    """
    delay = backoff(attempt, retry, rng)
    wished = getattr(error, "retry_after", None)
    if isinstance(wished, (int, float)) and not isinstance(wished, bool) and wished > delay:
        return min(float(wished), MAX_RETRY_AFTER)
    return delay
