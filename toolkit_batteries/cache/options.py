"""Options of the ``cache`` service (key/value cache with TTL)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import KVServerConnection
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["CacheOptions"]


@options_class
class CacheOptions(KVServerConnection):
    """Options of ``cache``; adapters ``memory`` (default), ``kvserver``, ``db``.

    The key-value server connection keys are inherited flat. ``db`` picks the SQL server
    or the embedded file by DSN; its table, key prefix and TTL are set from code.
    """

    capacity: int = option(0, doc="hint of the expected number of entries")
    verbose: bool = option(False, doc="extra diagnostics")
    dsn: str = option("", doc="SQL connection string or file path (db)")
    dedicated_pool: bool = option(False, doc="open a private pool instead of sharing by DSN")
    sweep_interval: Duration = option(
        timedelta(minutes=1), doc="how often expired entries are purged (memory)"
    )
    max_entries: int = option(1000, doc="entries stored before eviction (memory)")
    url: str = option("", doc="key-value server URL; takes precedence over addr")
    adapter: str = option("", doc="legacy duplicate of the outer adapter; set that one instead")
