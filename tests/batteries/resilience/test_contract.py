"""One contract for every resilience adapter: memory and kvserver (real Redis breaker).

A fake clock drives timeouts, backoff and the breaker, so the figures are exact; only
the tests of abandoned attempts and of the bulkhead's wait use (short) real time.
"""

from __future__ import annotations

import contextvars
import random
import threading
import time

import pytest

from toolkit_batteries.core.groups import ResilienceRetryPolicy
from toolkit_batteries.resilience import (
    BreakerOpenError,
    BulkheadFullError,
    OperationTimeoutError,
    Policy,
    PolicyClosedError,
    backoff,
)

from .conftest import SEED

NO_RETRY = {"retry": {"MaxAttempts": -1}}
REQUEST_ID = contextvars.ContextVar("request_id", default="none")


class Flaky:
    """Fails ``failures`` times with ``error``, then returns ``"ok"``; counts calls."""

    def __init__(self, failures: int = 0, error: type[Exception] = ConnectionError) -> None:
        self.failures = failures
        self.error = error
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error(f"failure {self.calls}")
        return ("ok", args, kwargs)


def fail(policy: Policy, times: int, error: type[Exception] = ValueError) -> None:
    for _ in range(times):
        with pytest.raises(error):
            policy.call(Flaky(1, error))


class TestResilienceContract:
    def test_a_call_passes_arguments_and_returns_the_result(self, make_policy):
        policy = make_policy()
        assert isinstance(policy, Policy)
        assert policy.call(Flaky(), 1, 2, key="v") == ("ok", (1, 2), {"key": "v"})
        stats = policy.stats()
        assert (stats["calls"], stats["successes"], stats["failures"]) == (1, 1, 0)
        assert policy.adapter_name == make_policy.adapter

    def test_retries_wait_the_backoff_delays(self, make_policy, clock):
        policy = make_policy(retry={"BaseDelay": "100ms", "MaxAttempts": 4})
        flaky = Flaky(failures=3)
        assert policy.call(flaky)[0] == "ok" and flaky.calls == 4
        rng = random.Random(SEED)
        retry = ResilienceRetryPolicy(base_delay=policy.settings.retry.base_delay, max_attempts=4)
        assert clock.sleeps == [backoff(n, retry, rng) for n in (1, 2, 3)]
        assert 0.09 <= clock.sleeps[0] <= 0.11 and 0.36 <= clock.sleeps[2] <= 0.44
        assert policy.stats()["retries"] == 3

    def test_exhausted_retries_raise_the_last_error(self, make_policy, clock):
        policy = make_policy()  # the resilience default: 3 attempts
        flaky = Flaky(failures=10)
        with pytest.raises(ConnectionError, match="failure 3"):
            policy.call(flaky)
        assert flaky.calls == 3 and len(clock.sleeps) == 2

    def test_max_attempts_below_one_means_a_single_attempt(self, make_policy, clock):
        policy = make_policy(**NO_RETRY)
        flaky = Flaky(failures=1)
        with pytest.raises(ConnectionError):
            policy.call(flaky)
        assert flaky.calls == 1 and clock.sleeps == []

    def test_retry_if_decides_what_is_worth_retrying(self, make_policy):
        policy = make_policy().derive(retry_if=lambda exc: isinstance(exc, ConnectionError))
        permanent = Flaky(failures=5, error=KeyError)
        with pytest.raises(KeyError):
            policy.call(permanent)
        assert permanent.calls == 1
        assert policy.call(Flaky(failures=2))[0] == "ok"

    def test_the_timeout_bounds_attempts_and_waits_together(self, make_policy, clock):
        policy = make_policy(timeout="1s", retry={"BaseDelay": "200ms", "MaxAttempts": 10})

        def slow_failure():
            clock.advance(0.3)
            raise ConnectionError("down")

        with pytest.raises(OperationTimeoutError) as caught:
            policy.call(slow_failure)
        # 0.3 attempt, 0.2 wait, 0.3 attempt -> 0.8 s; the next ~0.4 s wait would end
        # past 1 s, so it is not started.
        assert caught.value.attempts == 2
        assert isinstance(caught.value.__cause__, ConnectionError)
        assert len(clock.sleeps) == 1
        assert "within 1s (2 attempts)" in str(caught.value)
        assert policy.stats()["timeouts"] == 1

    def test_an_attempt_starting_past_the_deadline_does_not_start(self, make_policy, clock):
        policy = make_policy(timeout="1s", retry={"BaseDelay": "10ms", "Jitter": -1})
        flaky = Flaky(failures=5)

        def late():
            clock.advance(2)  # the attempt itself overruns (it returns, late)
            return flaky()

        with pytest.raises(OperationTimeoutError) as caught:
            policy.call(late)
        assert flaky.calls == 1 and caught.value.attempts == 1

    def test_a_hanging_attempt_is_abandoned_at_the_deadline(self, make_policy):
        policy = make_policy(timeout="100ms", **NO_RETRY)
        policy._clock = time.monotonic  # real time: the attempt really hangs
        release = threading.Event()
        finished = threading.Event()

        def hang():
            release.wait(30)
            finished.set()
            return "late"

        started = time.monotonic()
        with pytest.raises(OperationTimeoutError):
            policy.call(hang)
        assert 0.09 <= time.monotonic() - started < 5.0  # the deadline, not the 30 s hang
        stats = policy.stats()
        assert stats["abandoned"] == 1 and stats["active"] == 1  # it still holds its slot
        release.set()
        assert finished.wait(5)
        deadline = time.monotonic() + 5
        while policy.bulkhead.active and time.monotonic() < deadline:
            time.sleep(0.005)
        assert policy.bulkhead.active == 0

    def test_attempts_run_on_a_worker_with_the_callers_context(self, make_policy):
        policy = make_policy(timeout="5s")
        token = REQUEST_ID.set("r-42")
        try:
            where = policy.call(lambda: (threading.current_thread(), REQUEST_ID.get()))
        finally:
            REQUEST_ID.reset(token)
        assert where[0] is not threading.current_thread() and where[1] == "r-42"
        inline = make_policy(timeout="-1s")
        assert inline.call(threading.current_thread) is threading.current_thread()

    def test_consecutive_failures_trip_the_breaker(self, make_policy, clock):
        policy = make_policy(
            breaker={"enabled": True, "consecutive_failures": 3, "timeout": "30s"}, **NO_RETRY
        )
        assert policy.breaker_state() == "closed"
        fail(policy, 2)
        assert policy.call(Flaky())[0] == "ok"  # a success resets the streak
        fail(policy, 3)
        assert policy.breaker_state() == "open"
        flaky = Flaky()
        clock.advance(10)
        with pytest.raises(BreakerOpenError) as caught:
            policy.call(flaky)
        assert flaky.calls == 0
        assert caught.value.retry_after == pytest.approx(20.0)
        assert caught.value.state == "open" and f'"{policy.name}"' in str(caught.value)
        clock.advance(20)
        assert policy.breaker_state() == "half-open"
        assert policy.call(flaky)[0] == "ok"  # the probe succeeded: max_requests is 1
        assert policy.breaker_state() == "closed"
        assert policy.stats()["breaker_rejections"] == 1

    def test_an_open_breaker_is_not_retried(self, make_policy, clock):
        policy = make_policy(
            breaker={"enabled": True, "consecutive_failures": 2},
            retry={"MaxAttempts": 5, "BaseDelay": "1ms"},
        )
        flaky = Flaky(failures=10)
        with pytest.raises(BreakerOpenError) as caught:
            policy.call(flaky)
        assert flaky.calls == 2  # two attempts tripped it; the third was refused at once
        assert isinstance(caught.value.__cause__, ConnectionError)

    def test_a_failed_probe_reopens(self, make_policy, clock):
        policy = make_policy(
            breaker={"enabled": True, "consecutive_failures": 1, "timeout": "5s"}, **NO_RETRY
        )
        fail(policy, 1)
        clock.advance(5)
        assert policy.breaker_state() == "half-open"
        fail(policy, 1)
        assert policy.breaker_state() == "open"
        with pytest.raises(BreakerOpenError) as caught:
            policy.call(Flaky())
        assert caught.value.retry_after == pytest.approx(5.0)

    def test_half_open_admits_max_requests_probes_and_closes_after_as_many_successes(
        self, make_policy, clock
    ):
        policy = make_policy(
            timeout="10s",
            breaker={"enabled": True, "consecutive_failures": 1, "max_requests": 2},
            **NO_RETRY,
        )
        fail(policy, 1)
        clock.advance(30)
        gate, running = threading.Event(), threading.Semaphore(0)

        def probe():
            running.release()
            gate.wait(10)
            return "probed"

        results: list[str] = []
        threads = [
            threading.Thread(target=lambda: results.append(policy.call(probe))) for _ in range(2)
        ]
        for t in threads:
            t.start()
        assert running.acquire(timeout=5) and running.acquire(timeout=5)
        with pytest.raises(BreakerOpenError) as caught:
            policy.call(Flaky())
        assert caught.value.state == "half-open" and caught.value.retry_after == 0
        assert "probes are all taken" in str(caught.value)
        gate.set()
        for t in threads:
            t.join(5)
        assert results == ["probed", "probed"]
        assert policy.breaker_state() == "closed"

    def test_failure_ratio_applies_after_min_requests(self, make_policy):
        policy = make_policy(
            breaker={
                "enabled": True,
                "consecutive_failures": -1,
                "min_requests": 5,
                "failure_ratio": 0.6,
            },
            **NO_RETRY,
        )
        for outcome in "FSFF":  # 3 of 4 failed, but fewer than min_requests calls
            if outcome == "F":
                fail(policy, 1)
            else:
                policy.call(Flaky())
        assert policy.breaker_state() == "closed"
        fail(policy, 1)  # 4 of 5 = 0.8 >= 0.6
        assert policy.breaker_state() == "open"

    def test_old_buckets_leave_the_rolling_window(self, make_policy, clock):
        policy = make_policy(
            breaker={
                "enabled": True,
                "consecutive_failures": -1,
                "min_requests": 3,
                "failure_ratio": 1,
                "interval": "20s",
                "bucket_period": "10s",
            },
            **NO_RETRY,
        )
        clock.now = 100_000.0  # the start of a bucket
        fail(policy, 2)
        clock.advance(25)  # both failures are now older than the 2 x 10 s window
        fail(policy, 2)
        assert policy.breaker_state() == "closed"
        clock.advance(5)  # still within the window of the last two
        fail(policy, 1)
        assert policy.breaker_state() == "open"

    def test_failure_if_keeps_harmless_errors_out_of_the_breaker(self, make_policy):
        policy = make_policy(breaker={"enabled": True, "consecutive_failures": 2}, **NO_RETRY)
        lenient = policy.derive(failure_if=lambda exc: not isinstance(exc, KeyError))
        fail(lenient, 5, KeyError)
        assert lenient.breaker_state() == "closed"
        fail(lenient, 2, ValueError)
        assert lenient.breaker_state() == "open"

    def test_derived_names_have_their_own_breakers(self, make_policy):
        policy = make_policy(
            name="billing", breaker={"enabled": True, "consecutive_failures": 1}, **NO_RETRY
        )
        invoices = policy.derive("invoices")
        assert invoices.name == "billing.invoices"
        fail(invoices, 1)
        assert invoices.breaker_state() == "open"
        assert policy.breaker_state() == "closed"
        assert policy.call(Flaky())[0] == "ok"
        policy.reset_breaker()
        invoices.reset_breaker()
        assert invoices.breaker_state() == "closed"

    def test_an_outcome_from_an_older_generation_is_ignored(self, make_policy, clock):
        policy = make_policy(breaker={"enabled": True, "consecutive_failures": 1}, **NO_RETRY)
        store, name = policy._store, policy.name
        old = store.acquire(name, clock.now * 1000)
        fail(policy, 1)  # opens: a new generation
        clock.advance(60)
        assert policy.breaker_state() == "half-open"
        store.record(name, old, False, clock.now * 1000)  # late failure from before
        assert policy.breaker_state() == "half-open"

    def test_the_bulkhead_bounds_concurrency_queue_and_wait(self, make_policy):
        policy = make_policy(
            timeout="-1s", bulkhead={"max_concurrent": 1, "max_queue": 1, "max_wait": "600ms"}
        )
        gate, inside = threading.Event(), threading.Event()

        def hold():
            inside.set()
            gate.wait(10)
            return "held"

        holder = threading.Thread(target=policy.call, args=(hold,))
        holder.start()
        assert inside.wait(5)
        waiter_error: list[BaseException] = []

        def wait_in_queue():
            try:
                policy.call(Flaky())
            except BulkheadFullError as exc:
                waiter_error.append(exc)

        waiter = threading.Thread(target=wait_in_queue)
        started = time.monotonic()
        waiter.start()
        deadline = time.monotonic() + 5
        while policy.bulkhead.waiting == 0 and time.monotonic() < deadline:
            time.sleep(0.002)
        with pytest.raises(BulkheadFullError, match="wait queue is full"):
            policy.call(Flaky())
        waiter.join(5)
        assert 0.59 <= time.monotonic() - started < 3
        assert "within max_wait" in str(waiter_error[0])
        gate.set()
        holder.join(5)
        assert policy.call(Flaky())[0] == "ok"
        assert policy.stats()["bulkhead_rejections"] == 2

    def test_use_after_close_raises(self, make_policy):
        policy = make_policy()
        policy.call(Flaky())
        policy.close()
        policy.close()
        with pytest.raises(PolicyClosedError, match=r"resilience\.default"):
            policy.call(Flaky())

    def test_decorate_wraps_a_function(self, make_policy, clock):
        policy = make_policy(retry={"BaseDelay": "1ms"})
        flaky = Flaky(failures=1)
        guarded = policy.decorate(flaky)
        assert guarded(5)[0] == "ok" and flaky.calls == 2
