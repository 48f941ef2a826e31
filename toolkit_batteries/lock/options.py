"""Options of the ``lock`` service (distributed leases)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import KVServerBasic
from toolkit_batteries.core.option_kinds import kv_address, non_negative, relation
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["LockOptions"]


def _retry_not_shorter(options: LockOptions) -> str | None:
    """Warn when a waiting caller would sleep through a whole lease between attempts."""
    from .base import DEFAULT_RETRY_INTERVAL, DEFAULT_TTL

    ttl = options.ttl.total_seconds()
    retry = options.retry_interval.total_seconds()
    if (retry if retry > 0 else DEFAULT_RETRY_INTERVAL) < (ttl if ttl > 0 else DEFAULT_TTL):
        return None
    return 'option "retry_interval" is not shorter than "ttl"'


@options_class
class LockOptions(KVServerBasic):
    """Options of ``lock``; adapters ``memory`` (default) and ``kvserver``.

    Inherits the five basic key-value server keys flat (addr, password, db, tls, require_tls).
    """

    __checks__ = (
        kv_address("toolkit_lock.E002", adapters=("kvserver",)),
        non_negative("toolkit_lock.E003").on("ttl", "retry_interval", "max_entries"),
        relation(
            "toolkit_lock.W001",
            _retry_not_shorter,
            warning=True,
            hint="make retry_interval a small fraction of ttl",
        ),
    )

    url: str = option("", doc="key-value server URL")
    prefix: str = option("", doc="namespace for lock keys")
    ttl: Duration = option(timedelta(seconds=30), doc="default lease lifetime")
    retry_interval: Duration = option(
        timedelta(milliseconds=50), doc="wait between acquire attempts"
    )
    max_entries: int = option(1000, doc="leases stored before LRU eviction (memory)")
