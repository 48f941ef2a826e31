"""Test helpers shared by the cache, lock and idempotency suites.

* :class:`FakeClock`: a callable clock the adapters' ``clock`` attribute accepts, moved
  by hand so TTL tests never sleep.
* :class:`PrivateRedis`: a ``redis-server`` of the test's own on a free port, which the
  test may kill and restart (the shared server on 6379 is never touched).
* :func:`drop_table`: remove a test's table on SQLite or PostgreSQL.
* :func:`forget_runtime_caches`: drop the ``caches`` aliases a test registered at run time,
  so the leases their backends hold on the process-wide Redis clients go back.
"""

from __future__ import annotations

import contextlib
import gc
import uuid

from tests.support.clock import FakeClock as FakeClock
from tests.support.redis_server import PrivateRedis as PrivateRedis


def unique(prefix: str = "t") -> str:
    """Return a fresh lower-case name (instance names, tables, key prefixes)."""
    return f"{prefix}{uuid.uuid4().hex[:12]}"


def drop_table(database, table: str) -> None:
    """Drop ``table`` (a test's own) if it exists."""
    database.execute(f"DROP TABLE IF EXISTS {table}")


#: Backends that hold no Redis client lease: dropping them needs no garbage collection.
LEASE_FREE_BACKENDS = (".adapters.memory.MemoryCache", ".adapters.db.DBCache")


def forget_runtime_caches() -> None:
    """Drop the ``caches`` aliases registered at run time, and their backend objects."""
    from django.core.cache import caches

    leased = False
    for alias in [a for a in caches.settings if a.startswith("toolkit_cache_")]:
        backend = str(caches.settings.pop(alias, {}).get("BACKEND", ""))
        leased = leased or not backend.endswith(LEASE_FREE_BACKENDS)
        with contextlib.suppress(AttributeError):
            delattr(caches._connections, alias)
    if leased:  # a full collection costs 0.1-0.4 s, so it runs only when a lease may be held
        gc.collect()
