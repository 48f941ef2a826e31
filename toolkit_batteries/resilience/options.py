"""Options of the ``resilience`` service (retry, timeout, circuit breaker, bulkhead)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import KVServerBlock, ResilienceRetryPolicy, kvserver_block
from toolkit_batteries.core.option_kinds import opens, relation
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["BreakerOptions", "BulkheadOptions", "ResilienceKVServer", "ResilienceOptions"]


@options_class
class BreakerOptions:
    """The ``breaker.`` block: a circuit breaker over a rolling window."""

    enabled: bool = option(False, doc="turn the breaker on")
    max_requests: int = option(1, doc="probes allowed while half-open")
    interval: Duration = option(
        timedelta(seconds=30), doc="closed-state window before counts reset"
    )
    bucket_period: Duration = option(
        timedelta(seconds=10), doc="rolling-window bucket width; interval becomes a multiple"
    )
    timeout: Duration = option(timedelta(seconds=30), doc="open-state time before half-open")
    min_requests: int = option(10, doc="requests needed before the failure ratio applies")
    failure_ratio: float = option(
        0.5, min=0, max=1, doc="failure ratio in [0, 1] that trips the breaker"
    )
    consecutive_failures: int = option(5, doc="consecutive failures that trip the breaker")


@options_class
class BulkheadOptions:
    """The ``bulkhead.`` block: bounded concurrency with a bounded wait queue."""

    max_concurrent: int = option(100, doc="concurrent executions admitted")
    max_queue: int = option(100, doc="waiters bound; negative = unbounded")
    max_wait: Duration = option(
        timedelta(seconds=1), doc="wait for a slot; negative = wait indefinitely"
    )


@options_class
class ResilienceKVServer(KVServerBlock):
    """The ``kvserver.`` block of ``resilience``, whose key namespace defaults to ``resilience``."""

    prefix: str = option("resilience", doc="key namespace")


@options_class
class ResilienceOptions:
    """Options of ``resilience``; adapters ``memory`` (default) and ``kvserver``."""

    __checks__ = (
        opens(
            "toolkit_resilience.E002",
            "toolkit_batteries.resilience.base:settings_from_options",
            hint="counts must be at least 1, breaker durations positive, delays >= 0",
        ),
        relation(
            "toolkit_resilience.W002",
            lambda o: (
                None
                if o.breaker.enabled
                else "the kvserver adapter shares only the circuit breaker, and "
                "breaker.enabled is false"
            ),
            adapters=("kvserver",),
            warning=True,
            hint="set breaker.enabled to true, or use the memory adapter",
        ),
    )

    name: str = option("", doc="base name of the breaker")
    timeout: Duration = option(
        timedelta(seconds=5), doc="bound on the whole operation, retries included"
    )
    breaker: BreakerOptions = option(BreakerOptions(), doc="circuit breaker")
    bulkhead: BulkheadOptions = option(BulkheadOptions(), doc="bulkhead")
    kvserver: ResilienceKVServer = kvserver_block(
        "toolkit_resilience.W001", group=ResilienceKVServer
    )
    retry: ResilienceRetryPolicy | None = option(
        None, doc="backoff policy; unset until a key is given"
    )
