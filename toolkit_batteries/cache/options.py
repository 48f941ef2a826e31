"""Options of the ``cache`` service (key/value cache with TTL)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import KVServerConnection
from toolkit_batteries.core.option_kinds import (
    kv_address,
    non_negative,
    sql_target,
    warn_when_set,
)
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["CacheOptions"]


@options_class
class CacheOptions(KVServerConnection):
    """Options of ``cache``; adapters ``memory`` (default), ``kvserver``, ``db``.

    The key-value server connection keys are inherited flat. ``db`` picks the SQL server
    or the embedded file by DSN (empty: the ``db`` service's database). ``serializer`` and
    ``signing_key`` are deliberate extras beyond the spec (values read back from a shared
    server or table are unpickled; see the security note in docs/batteries/cache.md).
    """

    __checks__ = (kv_address("toolkit_cache.E002", adapters=("kvserver",)),)

    capacity: int = option(0, doc="hint of the expected number of entries")
    verbose: bool = option(False, doc="extra diagnostics")
    dsn: str = option(
        "",
        doc="SQL connection string or file path (db)",
        checks=sql_target("toolkit_cache.E003", adapters=("db",)),
    )
    dedicated_pool: bool = option(False, doc="open a private pool instead of sharing by DSN")
    sweep_interval: Duration = option(
        timedelta(minutes=1),
        doc="how often expired entries are purged (memory)",
        checks=non_negative("toolkit_cache.E004"),
    )
    max_entries: int = option(
        1000,
        doc="entries stored before eviction (memory)",
        checks=non_negative("toolkit_cache.E004"),
    )
    url: str = option("", doc="key-value server URL; takes precedence over addr")
    serializer: str = option(
        "pickle",
        choices=("pickle", "signed_pickle", "json"),
        doc="how kvserver and db values are stored: pickle, signed_pickle (HMAC) or json",
    )
    signing_key: str = option(
        "", secret=True, doc="HMAC key of signed_pickle; empty derives one from SECRET_KEY"
    )
    adapter: str = option(
        "",
        doc="legacy duplicate of the outer adapter; set that one instead",
        checks=warn_when_set(
            "toolkit_cache.W001",
            "is a legacy duplicate and is ignored",
            hint='set the adapter outside "options": {"adapter": ..., "options": {...}}',
        ),
    )
