"""The circuit breaker: one state machine, kept in memory or on a key-value server.

States are ``closed`` (calls pass; outcomes are counted), ``open`` (calls are refused with
:class:`BreakerOpenError` for ``timeout``) and ``half-open`` (up to ``max_requests`` probe
calls pass at once; ``max_requests`` successes close the breaker, one failure opens it
again).

In ``closed``, outcomes are counted in a rolling window of ``interval`` seconds made of
buckets ``bucket_period`` wide (``interval`` rounded up to a whole number of buckets; a
bucket older than the window no longer counts). The breaker trips open when either

* ``consecutive_failures`` calls in a row failed (a negative value disables this rule), or
* the window holds at least ``min_requests`` calls and failures / calls >= ``failure_ratio``.

Every state change increments a generation number. A call records its outcome with the
generation it started in, and an outcome from an older generation is ignored: a slow
call that started while closed cannot trip a breaker that has since opened and recovered.
A half-open breaker whose probes all went silent for ``timeout`` (their process died)
starts a fresh half-open round instead of refusing calls forever.

Both stores (:class:`MemoryBreakerStore` here, the Lua script of the ``kvserver``
adapter) implement exactly these rules, with times in milliseconds.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolkit_batteries.core.errors import InvalidOptionsError

__all__ = [
    "CLOSED",
    "HALF_OPEN",
    "OPEN",
    "BreakerConfig",
    "BreakerStore",
    "MemoryBreakerStore",
    "Permit",
    "breaker_config",
]

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half-open"


@dataclass(frozen=True, slots=True)
class BreakerConfig:
    """Validated breaker thresholds, durations in milliseconds."""

    max_requests: int = 1
    bucket_ms: float = 10_000.0
    buckets: int = 3
    timeout_ms: float = 30_000.0
    min_requests: int = 10
    failure_ratio: float = 0.5
    consecutive_failures: int = 5

    @property
    def interval_ms(self) -> float:
        """Return the window actually used: a whole number of buckets."""
        return self.bucket_ms * self.buckets


def breaker_config(options: Any, *, instance: str = "default") -> BreakerConfig:
    """Validate a ``BreakerOptions`` block; raise :class:`InvalidOptionsError` naming the field."""

    def invalid(name: str, reason: str) -> InvalidOptionsError:
        return InvalidOptionsError("resilience", f"breaker.{name}", reason, instance=instance)

    if options.max_requests < 1:
        raise invalid("max_requests", "must be at least 1")
    bucket = options.bucket_period.total_seconds() * 1000
    interval = options.interval.total_seconds() * 1000
    timeout = options.timeout.total_seconds() * 1000
    if bucket <= 0:
        raise invalid("bucket_period", "must be a positive duration")
    if interval <= 0:
        raise invalid("interval", "must be a positive duration")
    if timeout <= 0:
        raise invalid("timeout", "must be a positive duration")
    if options.min_requests < 1:
        raise invalid("min_requests", "must be at least 1")
    return BreakerConfig(
        max_requests=options.max_requests,
        bucket_ms=bucket,
        buckets=max(1, math.ceil(interval / bucket - 1e-9)),
        timeout_ms=timeout,
        min_requests=options.min_requests,
        failure_ratio=float(options.failure_ratio),
        consecutive_failures=options.consecutive_failures,
    )


@dataclass(frozen=True, slots=True)
class Permit:
    """What :meth:`BreakerStore.acquire` hands a call, to give back to ``record``."""

    generation: int
    probe: bool


class BreakerStore(Protocol):
    """Where breaker state lives; ``now_ms`` is ``None`` to use the store's own clock."""

    def acquire(self, name: str, now_ms: float | None) -> Permit | None:
        """Let a call through (``None``: the store could not be asked) or raise ``Refused``."""
        ...

    def record(self, name: str, permit: Permit | None, success: bool, now_ms: float | None) -> None:
        """Count a call's outcome."""
        ...

    def state(self, name: str, now_ms: float | None) -> str:
        """Return ``closed``, ``open`` or ``half-open``."""
        ...

    def reset(self, name: str) -> None:
        """Forget everything about ``name``: it is closed with empty counts."""
        ...


class Refused(Exception):
    """Raised by a store's ``acquire``: (state, retry after in ms). The policy translates."""

    def __init__(self, state: str, retry_after_ms: float) -> None:
        super().__init__(state, retry_after_ms)
        self.state = state
        self.retry_after_ms = retry_after_ms


@dataclass(slots=True)
class _State:
    state: str = CLOSED
    generation: int = 0
    since: float = 0.0
    consecutive: int = 0
    inflight: int = 0
    successes: int = 0
    #: slot -> [bucket index, successes, failures]
    slots: dict[int, list[float]] = field(default_factory=dict)


class MemoryBreakerStore:
    """Breaker state in this process: one lock, one small record per breaker name."""

    def __init__(self, config: BreakerConfig, clock_ms: Any) -> None:
        self.config = config
        self._clock_ms = clock_ms
        self._lock = threading.Lock()
        self._states: dict[str, _State] = {}

    def _get(self, name: str) -> _State:
        found = self._states.get(name)
        if found is None:
            found = self._states[name] = _State()
        return found

    def _now(self, now_ms: float | None) -> float:
        return self._clock_ms() if now_ms is None else now_ms

    def _move(self, s: _State, state: str, now: float) -> None:
        s.state = state
        s.generation += 1
        s.since = now
        s.consecutive = s.inflight = s.successes = 0
        s.slots.clear()

    def _advance(self, s: _State, now: float) -> None:
        """Apply the time-driven transitions: open -> half-open, stale half-open rounds."""
        if now < s.since + self.config.timeout_ms:
            return
        stale_round = s.state == HALF_OPEN and s.inflight >= self.config.max_requests
        if s.state == OPEN or stale_round:
            self._move(s, HALF_OPEN, now)

    def acquire(self, name: str, now_ms: float | None) -> Permit:
        """Let a call through, or raise :class:`Refused`."""
        now = self._now(now_ms)
        with self._lock:
            s = self._get(name)
            self._advance(s, now)
            if s.state == OPEN:
                raise Refused(OPEN, s.since + self.config.timeout_ms - now)
            if s.state == HALF_OPEN:
                if s.inflight >= self.config.max_requests:
                    raise Refused(HALF_OPEN, 0.0)
                s.inflight += 1
                return Permit(s.generation, True)
            return Permit(s.generation, False)

    def record(self, name: str, permit: Permit, success: bool, now_ms: float | None) -> None:
        """Count one outcome; trip, close or reopen as the rules say."""
        now = self._now(now_ms)
        config = self.config
        with self._lock:
            s = self._get(name)
            if permit.generation != s.generation:
                return
            if s.state == HALF_OPEN:
                if not permit.probe:
                    return
                s.inflight = max(0, s.inflight - 1)
                if not success:
                    self._move(s, OPEN, now)
                else:
                    s.successes += 1
                    if s.successes >= config.max_requests:
                        self._move(s, CLOSED, now)
                return
            if s.state != CLOSED:
                return
            index = math.floor(now / config.bucket_ms)
            slot = s.slots.get(index % config.buckets)
            if slot is None or slot[0] != index:
                slot = s.slots[index % config.buckets] = [index, 0, 0]
            slot[1 if success else 2] += 1
            s.consecutive = 0 if success else s.consecutive + 1
            if not success and self._trips(s, index):
                self._move(s, OPEN, now)

    def _trips(self, s: _State, index: int) -> bool:
        config = self.config
        if 0 < config.consecutive_failures <= s.consecutive:
            return True
        oldest = index - config.buckets
        total = failures = 0
        for bucket, good, bad in s.slots.values():
            if bucket > oldest:
                total += good + bad
                failures += bad
        return total >= config.min_requests and failures >= config.failure_ratio * total

    def state(self, name: str, now_ms: float | None) -> str:
        """Return the state as a call arriving now would find it."""
        now = self._now(now_ms)
        with self._lock:
            s = self._states.get(name)
            if s is None:
                return CLOSED
            self._advance(s, now)
            return s.state

    def reset(self, name: str) -> None:
        """Forget ``name``."""
        with self._lock:
            self._states.pop(name, None)
