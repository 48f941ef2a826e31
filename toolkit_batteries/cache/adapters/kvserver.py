"""The ``kvserver`` adapter: django-redis's ``RedisCache`` on the toolkit's shared Redis client.

:class:`KVServerCache` IS a ``django_redis.cache.RedisCache`` (a subclass): ``CACHES``
names it, ``django_redis.get_redis_connection(alias)`` returns its client, and
django-redis's own methods (``lock``, ``ttl``, ``expire``, ``keys``, ``delete_pattern``,
``iter_keys``...) work on it. django-redis's client is built with
:class:`~toolkit_batteries.core.kvclient.SharedConnectionFactory`, so the ``redis.Redis``
it holds is the one process-wide client (one connection pool) that every Redis battery
(lock, queue, ratelimit, idempotency, session, eventbus, resilience) leases for that
server: never two pools to one server. What the toolkit adds over a plain ``RedisCache``:

* ``CACHES`` entry: ``LOCATION`` is the cache's name; ``OPTIONS`` the connection options
  (``url`` or ``addr``, ``db``, ``password``, ``tls``, ``require_tls``, ``pool_size``...)
  and ``serializer``. A hand-written entry may give the server as ``LOCATION``
  (``redis://...``), as for Django's ``RedisCache``.
* The client comes from the process-wide registry
  (:data:`toolkit_batteries.core.kvclient.clients`): one per address and database, shared
  with every kvserver adapter and every other backend object (Django builds one per
  thread), unless ``dedicated_pool`` is set (then one of this cache's own). ``url`` wins
  over ``addr``; ``tls``/``rediss://`` get a TLS 1.2 floor and a checked host name;
  ``require_tls`` fails before any connection.
* Every key is stored under a namespace, ``toolkit:cache:<name>:``, followed by the key
  Django's rules build (``KEY_PREFIX:VERSION:key``), so :meth:`clear` deletes this
  cache's keys and nothing else (Django's own ``RedisCache.clear`` flushes the database).
* Integers are stored as decimal text, so :meth:`incr` is one atomic server-side
  ``INCRBY`` that keeps the key's expiry; every other value goes through the
  ``serializer`` (pickle by default; see :mod:`..serializers`). Expiry is
  ``SET ... PX`` in milliseconds, so fractional timeouts work.
* A server that cannot be reached raises :class:`ServiceUnavailableError` at once
  (bounded connect and socket timeouts, no retry loop); the next call reconnects.
"""

from __future__ import annotations

import pickle
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from toolkit_batteries.core.errors import MissingExtraError, ServiceUnavailableError

try:
    from django_redis.cache import RedisCache
    from redis.exceptions import ResponseError, WatchError
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("cache", "kvserver", "kvserver", "redis, django-redis") from None

from django.core.cache.backends.base import BaseCache

from toolkit_batteries.core.tracing import traced
from toolkit_batteries.core.transport import kv_unreachable

from ..base import DEFAULT_TIMEOUT, REMOTE_OPERATIONS, Cache, decode_options
from ..serializers import REFUSED, serializer_for

__all__ = ["MAX_WATCH_ATTEMPTS", "KVServerCache", "glob_escape", "release_leases"]

_INT64 = range(-(2**63), 2**63)
_loads = pickle.loads
#: Keys deleted per UNLINK call by clear().
_CLEAR_BATCH = 500
#: Optimistic transactions tried by incr() on a non-integer before giving up.
MAX_WATCH_ATTEMPTS = 64

# Add to an existing integer and keep its expiry; nil when the key does not exist.
_INCR = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
return redis.call('INCRBY', KEYS[1], ARGV[1])
"""
# Make a key persistent and report whether it exists (PERSIST alone says 0 for a key
# that exists without an expiry).
_PERSIST = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('PERSIST', KEYS[1])
return 1
"""


def glob_escape(text: str) -> str:
    """Escape the characters Redis's ``MATCH`` patterns treat specially."""
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text)


def _server_location(location: str) -> bool:
    return "://" in location


class _NamespacedKeys:
    """What django-redis's client reads of its backend, with keys under the namespace.

    ``DefaultClient`` builds keys with ``backend.key_func(key, key_prefix, version)``; this
    view prepends the cache's namespace, so ``cache.lock("x")``, ``cache.ttl("x")`` and
    ``cache.keys("*")`` address the very keys ``cache.set("x", ...)`` wrote.
    """

    __slots__ = ("_cache",)

    def __init__(self, cache: KVServerCache) -> None:
        self._cache = cache

    @property
    def default_timeout(self) -> Any:
        return self._cache.default_timeout

    @property
    def key_prefix(self) -> str:
        return self._cache.key_prefix

    @property
    def version(self) -> int:
        return self._cache.version

    def key_func(self, key: Any, key_prefix: str, version: Any) -> str:
        cache = self._cache
        return cache.namespace + cache.key_func(key, key_prefix, version)

    def make_key(self, key: Any, version: Any = None) -> str:
        return self._cache.namespace + self._cache.make_key(key, version)


#: Every backend object alive, so a CACHES change can return their leases at once.
_live: weakref.WeakSet[KVServerCache] = weakref.WeakSet()


def release_leases() -> None:
    """Return the client leases of every backend object (``CACHES`` changed).

    Django drops its backend objects when ``CACHES`` changes, but the per-thread storage
    it drops may keep them alive; their leases go back now instead of never. An object
    still used afterwards keeps working: redis-py reconnects a closed pool on demand.
    """
    for cache in list(_live):
        cache._lease()


@traced(*REMOTE_OPERATIONS)
class KVServerCache(Cache, RedisCache):
    """django-redis's ``RedisCache`` with the toolkit's namespace, serializers and TLS rules."""

    adapter_name = "kvserver"

    def __init__(self, location: Any, params: Mapping[str, Any]) -> None:
        """Lease the process-wide client for the configured server (nothing connects yet)."""
        from toolkit_batteries.core.kvclient import clients
        from toolkit_batteries.core.pools import resolve_kv_address

        location = str(location or "").strip()
        url = ""
        if _server_location(location):  # a hand-written entry in RedisCache's style
            url, prefix = location, str(params.get("KEY_PREFIX", "") or "")
            location = f"django:{prefix}" if prefix else "django"
        super().__init__(location, params)
        options, _ = decode_options(params, self.instance)
        url = str(options.url or "").strip() or url
        address = resolve_kv_address("cache", options, instance=self.instance, url=url)
        self._serializer = serializer_for(options, instance=self.instance)
        private = ("cache", self.instance) if options.dedicated_pool else None
        client = clients.lease(
            address, options, service="cache", instance=self.instance, private=private
        )
        # The lease goes back when Django drops this object (setting_changed, thread end).
        self._lease = weakref.finalize(self, clients.release, client)
        _live.add(self)
        self._redis = client
        self.namespace = f"toolkit:cache:{self.instance}:"
        self.target = address.describe()
        self._unreachable = kv_unreachable(self.service_name, self.instance)
        # ping() names the display-safe address (no credentials): which server is away.
        self._ping_unreachable = kv_unreachable(
            self.service_name,
            self.instance,
            "cannot reach the key-value server at "
            + self.target.replace("{", "{{").replace("}", "}}")
            + " ({error})",
        )
        self._incr = client.register_script(_INCR)
        self._persist = client.register_script(_PERSIST)
        # django-redis's side: its client connects through the shared registry (the very
        # client above), reads and writes with this cache's serializer, and builds keys
        # under this cache's namespace, so both APIs see the same entries.
        RedisCache.__init__(
            self,
            address.describe(),
            {
                **params,
                "OPTIONS": {
                    "CONNECTION_FACTORY": "toolkit_batteries.core.kvclient.SharedConnectionFactory",
                    "SERIALIZER": "toolkit_batteries.cache.serializers.DjangoRedisSerializer",
                    "TOOLKIT_CLIENT": client,
                    "TOOLKIT_SERIALIZER": self._serializer,
                },
            },
        )

    @property
    def client(self) -> Any:
        """Return django-redis's client (``DefaultClient``) over the shared ``redis.Redis``."""
        if self._client is None:
            client = self._client_cls(self._server, self._params, _NamespacedKeys(self))
            reverse, skip = client.reverse_key, len(self.namespace)
            client.reverse_key = lambda key: reverse(key[skip:])  # keys() drops the namespace
            self._client = client
        return self._client

    def ping(self) -> bool:
        """Make one round trip to the server (``toolkit doctor``, ``/readyz``)."""
        with self._ping_unreachable:
            return bool(self._redis.ping())

    def _encode(self, value: Any) -> bytes | int:
        if type(value) is int and value in _INT64:
            return value
        return self._serializer.dumps(value)

    def _decode(self, raw: bytes) -> Any:
        if raw[:1] == b"\x80" and self._serializer.name == "pickle":
            return _loads(raw)
        return self._serializer.loads(raw)

    # ------------------------------------------------------------------ helpers

    def _key(self, key: str, version: int | None) -> str:
        return self.namespace + self.make_and_validate_key(key, version)

    def _milliseconds(self, timeout: Any) -> int | None:
        """Return the lifetime in ms (at least 1 when positive), ``None`` for forever."""
        lifetime = self.expiry_seconds(timeout)
        if lifetime is None:
            return None
        if lifetime <= 0:
            return 0
        return max(1, int(lifetime * 1000))

    # ------------------------------------------------------------------ reads

    def get(self, key: str, default: Any = None, version: int | None = None) -> Any:
        """Return the value of ``key``, or ``default``."""
        key = self._key(key, version)
        with self._unreachable:
            raw = self._redis.get(key)
        if raw is None:
            return default
        value = self._decode(raw)
        return default if value is REFUSED else value

    def get_many(self, keys: Iterable[str], version: int | None = None) -> dict[str, Any]:
        """Return the values of ``keys`` that exist (one ``MGET``)."""
        made = {self._key(key, version): key for key in keys}
        if not made:
            return {}
        with self._unreachable:
            values = self._redis.mget(list(made))
        found = {}
        for original, raw in zip(made.values(), values, strict=True):
            if raw is not None and (value := self._decode(raw)) is not REFUSED:
                found[original] = value
        return found

    def has_key(self, key: str, version: int | None = None) -> bool:
        """Tell whether ``key`` exists."""
        key = self._key(key, version)
        with self._unreachable:
            return bool(self._redis.exists(key))

    # ------------------------------------------------------------------ writes

    def set(
        self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> None:
        """Store ``value`` under ``key`` for ``timeout`` seconds."""
        key = self._key(key, version)
        ms = self._milliseconds(timeout)
        with self._unreachable:
            if ms is None:
                self._redis.set(key, self._encode(value))
            elif ms == 0:
                self._redis.delete(key)
            else:
                self._redis.set(key, self._encode(value), px=ms)

    def add(
        self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        """Store ``value`` only if ``key`` does not exist (``SET NX``); tell whether it did."""
        key = self._key(key, version)
        ms = self._milliseconds(timeout)
        with self._unreachable:
            if ms == 0:  # stored and expired at once: report, keep nothing
                added = bool(self._redis.set(key, b"", nx=True, px=1))
                if added:
                    self._redis.delete(key)
                return added
            return bool(self._redis.set(key, self._encode(value), nx=True, px=ms))

    def _set_many(self, data: Mapping[str, Any], timeout: Any, version: int | None) -> None:
        """Store the batch in one round trip."""
        ms = self._milliseconds(timeout)
        with self._unreachable:
            pipe = self._redis.pipeline(transaction=False)
            for key, value in data.items():
                made = self._key(key, version)
                if ms == 0:
                    pipe.delete(made)
                else:
                    pipe.set(made, self._encode(value), px=ms)
            pipe.execute()

    def touch(self, key: str, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        """Give ``key`` a new lifetime; tell whether it existed."""
        key = self._key(key, version)
        ms = self._milliseconds(timeout)
        with self._unreachable:
            if ms is None:
                return bool(self._persist(keys=[key]))
            if ms == 0:
                return bool(self._redis.delete(key))
            return bool(self._redis.pexpire(key, ms))

    def incr(self, key: str, delta: int = 1, version: int | None = None) -> Any:
        """Add ``delta`` atomically on the server, keeping the expiry; ValueError if absent."""
        made = self._key(key, version)
        with self._unreachable:
            if type(delta) is int:
                try:
                    value = self._incr(keys=[made], args=[delta])
                except ResponseError:
                    value = self._incr_pickled(made, delta)  # not a 64-bit integer
            else:
                value = self._incr_pickled(made, delta)
        if value is None:
            raise ValueError(f"Key '{made}' not found")
        return value

    def decr(self, key: str, delta: int = 1, version: int | None = None) -> Any:
        """Subtract ``delta`` atomically (``incr`` of ``-delta``); ValueError if absent."""
        return self.incr(key, -delta, version)

    # Django's versions of these (through get/set/delete above), not django-redis's.
    incr_version = BaseCache.incr_version
    decr_version = BaseCache.decr_version
    get_or_set = BaseCache.get_or_set

    def _incr_pickled(self, key: str, delta: Any) -> Any:
        """Add to a serialized number with an optimistic transaction (WATCH/MULTI).

        Another writer changing the key between WATCH and EXEC makes the transaction
        retry; after :data:`MAX_WATCH_ATTEMPTS` lost races the call fails with
        :class:`ServiceUnavailableError` instead of spinning forever.
        """
        with self._redis.pipeline() as pipe:
            for _ in range(MAX_WATCH_ATTEMPTS):
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    current = REFUSED if raw is None else self._decode(raw)
                    if current is REFUSED:
                        pipe.unwatch()
                        return None
                    value = current + delta
                    pipe.multi()
                    pipe.set(key, self._encode(value), keepttl=True)
                    pipe.execute()
                    return value
                except WatchError:
                    continue
        raise ServiceUnavailableError(
            self.service_name,
            f"incr lost {MAX_WATCH_ATTEMPTS} races in a row to other writers of one key",
            instance=self.instance,
        )

    def delete(self, key: str, version: int | None = None) -> bool:
        """Remove ``key``; tell whether it existed."""
        key = self._key(key, version)
        with self._unreachable:
            return bool(self._redis.delete(key))

    def delete_many(self, keys: Iterable[str], version: int | None = None) -> None:
        """Remove every key in ``keys`` (one ``DEL``)."""
        made = [self._key(key, version) for key in keys]
        if not made:
            return
        with self._unreachable:
            self._redis.delete(*made)

    def clear(self) -> None:
        """Delete every key under this cache's namespace (``SCAN`` + ``UNLINK``), no other."""
        pattern = glob_escape(self.namespace) + "*"
        with self._unreachable:
            batch: list[bytes] = []
            for found in self._redis.scan_iter(match=pattern, count=1000):
                batch.append(found)
                if len(batch) >= _CLEAR_BATCH:
                    self._redis.unlink(*batch)
                    batch.clear()
            if batch:
                self._redis.unlink(*batch)

    # ------------------------------------------------------------------ lifecycle

    def ttl_ms(self, key: str, version: int | None = None) -> int | None:
        """Return the milliseconds ``key`` has left, ``None`` if it never expires or is absent."""
        with self._unreachable:
            left = self._redis.pttl(self._key(key, version))
        return left if left >= 0 else None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} cache.{self.instance} {self.target}>"
