"""Build the ``redis.Redis`` client behind every ``kvserver`` adapter.

The spec's connection keys map onto redis-py as far as redis-py supports them:

============================  ==========================================================
``pool_size``                 ``max_connections`` of a ``BlockingConnectionPool``;
                              <= 0 means 10 per available processor
``pool_timeout``              how long a command waits for a free connection when the
                              pool is exhausted (``timeout``; default 4 s, the original's
                              read timeout plus one second)
``max_conn_idle_time``        ``health_check_interval``: a connection idle longer than
                              this is checked with PING before reuse (default 30 s)
``tls`` / ``rediss://``       ``SSLConnection`` with ``ssl_min_version`` TLS 1.2
``min_idle_conns``            not supported by redis-py (connections open on demand)
``max_conn_lifetime``         not supported by redis-py
============================  ==========================================================

Connect and socket timeouts are bounded (5 s and 3 s, the original's dial and read
timeouts) so a dead server fails a command instead of hanging it; a command that fails on
a stale connection is retried once on a new one, so a server restart costs no error.
redis-py is imported here, lazily: a project without the ``kvserver`` extra never
imports it.
"""

from __future__ import annotations

import os
import ssl
from typing import TYPE_CHECKING, Any

from .errors import MissingExtraError

if TYPE_CHECKING:
    from .pools import KVAddress

__all__ = ["build_kv_client", "default_pool_size"]

#: Seconds to wait for a TCP connection (the original's dial timeout).
CONNECT_TIMEOUT = 5.0
#: Seconds to wait for a reply (the original's read/write timeout).
SOCKET_TIMEOUT = 3.0
#: Seconds a command waits for a pooled connection by default (read timeout + 1 s).
DEFAULT_POOL_TIMEOUT = SOCKET_TIMEOUT + 1.0
#: Seconds of idleness after which a connection is pinged before reuse, by default.
DEFAULT_HEALTH_CHECK = 30


def default_pool_size() -> int:
    """Return 10 connections per processor available to this process."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cpus = os.cpu_count() or 1
    return 10 * max(1, cpus)


def build_kv_client(
    address: KVAddress, options: Any, *, service: str, instance: str = "default"
) -> Any:
    """Return a ``redis.Redis`` for ``address`` with the options' pool settings.

    No connection is made here; the first command connects.
    """
    try:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry
    except ImportError:
        raise MissingExtraError(service, "kvserver", "kvserver", "redis") from None

    pool_size = int(getattr(options, "pool_size", 0) or 0)
    pool_timeout = getattr(options, "pool_timeout", None)
    idle = getattr(options, "max_conn_idle_time", None)
    kwargs: dict[str, Any] = {
        "host": address.host,
        "port": address.port,
        "db": address.db,
        "username": address.username or None,
        "password": address.password or None,
        "socket_connect_timeout": CONNECT_TIMEOUT,
        "socket_timeout": SOCKET_TIMEOUT,
        "health_check_interval": (
            max(1, int(idle.total_seconds())) if idle else DEFAULT_HEALTH_CHECK
        ),
        "client_name": "toolkit",
        # One immediate retry on a fresh connection: after a server restart the first
        # command on a stale pooled socket fails, the retry reconnects. A server that is
        # really down still fails fast (refused) or after the bounded timeouts.
        "retry": Retry(NoBackoff(), 1),
    }
    connection_class: type = redis.Connection
    if address.tls:
        connection_class = redis.SSLConnection
        kwargs["ssl_min_version"] = ssl.TLSVersion.TLSv1_2
    pool = redis.BlockingConnectionPool(
        max_connections=pool_size if pool_size > 0 else default_pool_size(),
        timeout=pool_timeout.total_seconds() if pool_timeout else DEFAULT_POOL_TIMEOUT,
        connection_class=connection_class,
        **kwargs,
    )
    client = redis.Redis(connection_pool=pool)
    # The size the first opener asked for, compared by the registry with later openers.
    client.toolkit_pool_size = pool_size
    return client
