"""Options of the ``idempotency`` service (reserve-then-commit request records)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import KVServerBlock
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["IdempotencyOptions"]


@options_class
class IdempotencyOptions:
    """Options of ``idempotency``; adapters ``memory`` (default), ``kvserver``, ``db``."""

    ttl: Duration = option(timedelta(hours=24), doc="default reservation lifetime")
    dsn: str = option("", doc="SQL connection string or file path (db)")
    dedicated_pool: bool = option(False, doc="open a private pool instead of sharing by DSN")
    kvserver: KVServerBlock = option(
        KVServerBlock(), doc="key-value server connection (kvserver adapter)"
    )
    max_entries: int = option(1000, doc="records kept before least-recently-used eviction (memory)")
