"""Test helpers shared by the cache, lock and idempotency suites.

* :class:`FakeClock`: a callable clock the adapters' ``clock`` attribute accepts, moved
  by hand so TTL tests never sleep.
* :class:`PrivateRedis`: a ``redis-server`` of the test's own on a free port, which the
  test may kill and restart (the shared server on 6379 is never touched).
* :func:`drop_table`: remove a test's table on SQLite or PostgreSQL.
"""

from __future__ import annotations

import uuid

from tests.support.clock import FakeClock as FakeClock
from tests.support.redis_server import PrivateRedis as PrivateRedis


def unique(prefix: str = "t") -> str:
    """Return a fresh lower-case name (instance names, tables, key prefixes)."""
    return f"{prefix}{uuid.uuid4().hex[:12]}"


def drop_table(database, table: str) -> None:
    """Drop ``table`` (a test's own) if it exists."""
    database.execute(f"DROP TABLE IF EXISTS {table}")
