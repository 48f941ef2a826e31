"""Options of the ``ratelimit`` service (token buckets)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import KVServerBlock, kvserver_block
from toolkit_batteries.core.option_kinds import opens
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["RateLimitOptions"]


@options_class
class RateLimitOptions:
    """Options of ``ratelimit``; adapters ``memory`` (default) and ``kvserver``."""

    __checks__ = (
        opens(
            "toolkit_ratelimit.E002",
            "toolkit_batteries.ratelimit.base:limits_from_options",
            hint="rate must be above 0; burst and max_entries at least 1; durations positive",
        ),
    )

    rate: float = option(10.0, doc="tokens refilled per second")
    burst: int = option(20, doc="maximum bucket size")
    idle_ttl: Duration = option(timedelta(minutes=10), doc="idle entry lifetime")
    sweep_interval: Duration = option(timedelta(minutes=1), doc="idle-entry sweep interval")
    max_entries: int = option(1000, doc="buckets kept before LRU eviction (memory)")
    kvserver: KVServerBlock = kvserver_block("toolkit_ratelimit.W001")
