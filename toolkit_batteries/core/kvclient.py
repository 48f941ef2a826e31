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
``tls`` / ``rediss://``       ``SSLConnection`` with ``ssl_min_version`` TLS 1.2 and
                              ``ssl_check_hostname=True`` passed explicitly (redis-py
                              before 6 defaulted to not checking the server's name)
``min_idle_conns``            not supported by redis-py (connections open on demand)
``max_conn_lifetime``         not supported by redis-py
============================  ==========================================================

Connect and socket timeouts are bounded (5 s and 3 s, the original's dial and read
timeouts) so a dead server fails a command instead of hanging it; a command that fails on
a stale connection is retried once on a new one, so a server restart costs no error.
redis-py is imported here, lazily: a project without the ``kvserver`` extra never
imports it.

**One client per address, per process.** :data:`clients` is the process-wide registry
every ``kvserver`` adapter (through ``ctx.pools.kvserver``) and every Django-held cache
backend borrows from (django-redis included: the ``kvserver`` cache is a
``django_redis.cache.RedisCache`` whose connection factory,
:class:`SharedConnectionFactory`, hands out this registry's client, so
``get_redis_connection("default")`` is the client a lock or a queue on that server
uses): one ``redis.Redis`` (one connection pool) per host, port, database,
user name and TLS setting, whichever container or Django handler asks. The first opener's
pool settings and password win. Each borrower holds a lease; the client is closed when the
last lease is returned (a container closing, a cache backend garbage-collected), and any
left at process exit.
"""

from __future__ import annotations

import atexit
import logging
import os
import ssl
import threading
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import MissingExtraError

if TYPE_CHECKING:
    from .pools import KVAddress

__all__ = [
    "KVClients",
    "SharedConnectionFactory",
    "build_kv_client",
    "clients",
    "default_pool_size",
]

logger = logging.getLogger("toolkit.pools")

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
        "client_name": f"toolkit-{os.getpid()}",  # CLIENT LIST tells processes apart
        # One immediate retry on a fresh connection: after a server restart the first
        # command on a stale pooled socket fails, the retry reconnects. A server that is
        # really down still fails fast (refused) or after the bounded timeouts.
        "retry": Retry(NoBackoff(), 1),
    }
    connection_class: type = redis.Connection
    if address.tls:
        connection_class = redis.SSLConnection
        kwargs["ssl_min_version"] = ssl.TLSVersion.TLSv1_2
        # Explicit: redis-py before 6 did not check the certificate's host name by default.
        kwargs["ssl_check_hostname"] = True
        kwargs["ssl_cert_reqs"] = ssl.CERT_REQUIRED
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


# --------------------------------------------------------------------------- registry


@dataclass(slots=True)
class _Shared:
    client: Any
    owner: str
    leases: int


def _close_client(client: Any) -> None:
    client.close()
    client.connection_pool.disconnect()


class KVClients:
    """The process-wide registry of ``redis.Redis`` clients, leased by their users."""

    def __init__(self) -> None:
        # Reentrant: a lease is released by a ``weakref.finalize`` of the object that held
        # it, and the garbage collector may run that finalizer in this very thread while it
        # holds the lock (building a client allocates); a plain Lock deadlocks there.
        self._lock = threading.RLock()
        self._by_key: dict[Hashable, _Shared] = {}
        self._by_client: dict[int, Hashable] = {}

    def lease(
        self,
        address: KVAddress,
        options: Any,
        *,
        service: str,
        instance: str = "default",
        private: Hashable | None = None,
    ) -> Any:
        """Return the client for ``address`` (building it once) and count one more lease.

        ``private`` adds to the sharing key: borrowers passing equal ``private`` values
        share a client of their own (a cache backend's ``dedicated_pool``); pass a fresh
        ``object()`` for a client nobody else gets. Nothing connects here.
        """
        key: Hashable = (*address.share_key, address.username, address.tls, private)
        with self._lock:
            shared = self._by_key.get(key)
            if shared is not None:
                shared.leases += 1
                return shared.client
            # Built under the lock: building connects nothing, and two threads asking for
            # one address must get one client.
            client = build_kv_client(address, options, service=service, instance=instance)
            self._by_key[key] = _Shared(client, f"{service}.{instance}", 1)
            self._by_client[id(client)] = key
            return client

    def release(self, client: Any) -> None:
        """Return one lease of ``client``; the last one closes it."""
        with self._lock:
            key = self._by_client.get(id(client))
            shared = None if key is None else self._by_key.get(key)
            if shared is None or shared.client is not client:
                return
            shared.leases -= 1
            if shared.leases > 0:
                return
            del self._by_key[key]
            del self._by_client[id(client)]
        _close_client(client)

    def owner(self, client: Any) -> str:
        """Return ``service.instance`` of whoever built ``client`` (``""`` if unknown)."""
        with self._lock:
            key = self._by_client.get(id(client))
            shared = None if key is None else self._by_key.get(key)
            return shared.owner if shared is not None else ""

    def leases(self, client: Any) -> int:
        """Return how many leases of ``client`` are out (0 once it is closed)."""
        with self._lock:
            key = self._by_client.get(id(client))
            shared = None if key is None else self._by_key.get(key)
            return shared.leases if shared is not None else 0

    def close_all(self) -> None:
        """Close every client, leased or not (process exit; tests that need a clean slate)."""
        with self._lock:
            shared = list(self._by_key.values())
            self._by_key.clear()
            self._by_client.clear()
        for entry in shared:
            try:
                _close_client(entry.client)
            except Exception:  # at exit: one failing client must not keep others open
                logger.debug("closing a key-value client failed", exc_info=True)


#: The one registry of this process.
clients = KVClients()
atexit.register(clients.close_all)


# --------------------------------------------------------------------------- django-redis


class SharedConnectionFactory:
    """django-redis's ``CONNECTION_FACTORY`` that hands out the registry's clients.

    django-redis keeps its own process-wide pools (``ConnectionFactory._pools``); naming
    this class instead makes its client the one :data:`clients` holds for that server, so
    a django-redis cache and every Redis battery share one connection pool. The
    ``kvserver`` cache passes its leased client as ``OPTIONS["TOOLKIT_CLIENT"]``; a
    hand-written ``django_redis.cache.RedisCache`` entry may name this class too::

        CACHES = {"default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:6379/0",
            "OPTIONS": {
                "CONNECTION_FACTORY": "toolkit_batteries.core.kvclient.SharedConnectionFactory"
            },
        }}

    and then leases the registry's client for ``LOCATION`` (``PASSWORD`` and
    ``USERNAME`` from ``OPTIONS`` as django-redis reads them; TLS for ``rediss://``).
    """

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        self._leased: list[Any] = []

    def connect(self, url: str) -> Any:
        """Return the registry's client for ``url`` (the cache's own client when given)."""
        given = self.options.get("TOOLKIT_CLIENT")
        if given is not None:
            return given
        import weakref
        from types import SimpleNamespace

        from .pools import resolve_kv_address

        options = SimpleNamespace(password=str(self.options.get("PASSWORD") or ""))
        address = resolve_kv_address("cache", options, url=url)
        if self.options.get("USERNAME"):
            address = dataclass_replace(address, username=str(self.options["USERNAME"]))
        client = clients.lease(address, options, service="cache", instance="django_redis")
        weakref.finalize(self, clients.release, client)
        return client

    def disconnect(self, connection: Any) -> None:
        """Do nothing: the registry owns the client and closes it with its last lease."""


def dataclass_replace(obj: Any, **changes: Any) -> Any:
    """Return a copy of a frozen dataclass with ``changes`` (``dataclasses.replace``)."""
    import dataclasses

    return dataclasses.replace(obj, **changes)
