"""The ``kvserver`` adapter: a cache on a Redis-protocol key-value server.

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
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.errors import MissingExtraError, ServiceUnavailableError

try:
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import ResponseError, WatchError
    from redis.exceptions import TimeoutError as RedisTimeoutError
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("cache", "kvserver", "kvserver", "redis") from None

from toolkit_batteries.core.tracing import traced

from ..base import DEFAULT_TIMEOUT, Cache, decode_options
from ..serializers import REFUSED, serializer_for

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = ["MAX_WATCH_ATTEMPTS", "KVServerCache", "glob_escape", "release_leases"]

_UNREACHABLE = (RedisConnectionError, RedisTimeoutError)
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


@traced(
    "get",
    "get_many",
    "has_key",
    "set",
    "add",
    "set_many",
    "touch",
    "incr",
    "delete",
    "delete_many",
    "clear",
)
class KVServerCache(Cache):
    """A cache whose entries live on a key-value server."""

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
        self._client = client
        self.namespace = f"toolkit:cache:{self.instance}:"
        self.target = address.describe()
        self._incr = client.register_script(_INCR)
        self._persist = client.register_script(_PERSIST)

    @classmethod
    def prepare(cls, ctx: OpenContext) -> dict[str, Any]:
        """Resolve the address (``require_tls`` fails here) and register the client.

        The container's registry then lists the client as borrowed by this instance
        (``toolkit doctor`` pings it); it is the same process-wide client the Django-held
        backend leases.
        """
        options = ctx.options
        ctx.pools.kvserver(
            ctx.service,
            options,
            instance=ctx.instance,
            url=options.url,
            private=("cache", ctx.instance) if options.dedicated_pool else None,
        )
        return {}

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

    def _unavailable(self, exc: Exception) -> ServiceUnavailableError:
        return ServiceUnavailableError(
            self.service_name,
            f"cannot reach the key-value server ({type(exc).__name__})",
            instance=self.instance,
        )

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
        try:
            raw = self._client.get(key)
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from None
        if raw is None:
            return default
        value = self._decode(raw)
        return default if value is REFUSED else value

    def get_many(self, keys: Iterable[str], version: int | None = None) -> dict[str, Any]:
        """Return the values of ``keys`` that exist (one ``MGET``)."""
        made = {self._key(key, version): key for key in keys}
        if not made:
            return {}
        try:
            values = self._client.mget(list(made))
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from None
        found = {}
        for original, raw in zip(made.values(), values, strict=True):
            if raw is not None and (value := self._decode(raw)) is not REFUSED:
                found[original] = value
        return found

    def has_key(self, key: str, version: int | None = None) -> bool:
        """Tell whether ``key`` exists."""
        key = self._key(key, version)
        try:
            return bool(self._client.exists(key))
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from None

    # ------------------------------------------------------------------ writes

    def set(
        self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> None:
        """Store ``value`` under ``key`` for ``timeout`` seconds."""
        key = self._key(key, version)
        ms = self._milliseconds(timeout)
        try:
            if ms is None:
                self._client.set(key, self._encode(value))
            elif ms == 0:
                self._client.delete(key)
            else:
                self._client.set(key, self._encode(value), px=ms)
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from None

    def add(
        self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        """Store ``value`` only if ``key`` does not exist (``SET NX``); tell whether it did."""
        key = self._key(key, version)
        ms = self._milliseconds(timeout)
        try:
            if ms == 0:  # stored and expired at once: report, keep nothing
                added = bool(self._client.set(key, b"", nx=True, px=1))
                if added:
                    self._client.delete(key)
                return added
            return bool(self._client.set(key, self._encode(value), nx=True, px=ms))
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from None

    def set_many(
        self,
        data: Mapping[str, Any],
        timeout: Any = DEFAULT_TIMEOUT,
        version: int | None = None,
    ) -> list[str]:
        """Store every pair in one round trip; return the failed keys (always none)."""
        if not data:
            return []
        ms = self._milliseconds(timeout)
        try:
            pipe = self._client.pipeline(transaction=False)
            for key, value in data.items():
                made = self._key(key, version)
                if ms == 0:
                    pipe.delete(made)
                else:
                    pipe.set(made, self._encode(value), px=ms)
            pipe.execute()
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from None
        return []

    def touch(self, key: str, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        """Give ``key`` a new lifetime; tell whether it existed."""
        key = self._key(key, version)
        ms = self._milliseconds(timeout)
        try:
            if ms is None:
                return bool(self._persist(keys=[key]))
            if ms == 0:
                return bool(self._client.delete(key))
            return bool(self._client.pexpire(key, ms))
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from None

    def incr(self, key: str, delta: int = 1, version: int | None = None) -> Any:
        """Add ``delta`` atomically on the server, keeping the expiry; ValueError if absent."""
        made = self._key(key, version)
        try:
            if type(delta) is int:
                try:
                    value = self._incr(keys=[made], args=[delta])
                except ResponseError:
                    value = self._incr_pickled(made, delta)  # not a 64-bit integer
            else:
                value = self._incr_pickled(made, delta)
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from None
        if value is None:
            raise ValueError(f"Key '{made}' not found")
        return value

    def _incr_pickled(self, key: str, delta: Any) -> Any:
        """Add to a serialized number with an optimistic transaction (WATCH/MULTI).

        Another writer changing the key between WATCH and EXEC makes the transaction
        retry; after :data:`MAX_WATCH_ATTEMPTS` lost races the call fails with
        :class:`ServiceUnavailableError` instead of spinning forever.
        """
        with self._client.pipeline() as pipe:
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
        try:
            return bool(self._client.delete(key))
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from None

    def delete_many(self, keys: Iterable[str], version: int | None = None) -> None:
        """Remove every key in ``keys`` (one ``DEL``)."""
        made = [self._key(key, version) for key in keys]
        if not made:
            return
        try:
            self._client.delete(*made)
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from None

    def clear(self) -> None:
        """Delete every key under this cache's namespace (``SCAN`` + ``UNLINK``), no other."""
        pattern = glob_escape(self.namespace) + "*"
        try:
            batch: list[bytes] = []
            for found in self._client.scan_iter(match=pattern, count=1000):
                batch.append(found)
                if len(batch) >= _CLEAR_BATCH:
                    self._client.unlink(*batch)
                    batch.clear()
            if batch:
                self._client.unlink(*batch)
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from None

    # ------------------------------------------------------------------ lifecycle

    def ttl_ms(self, key: str, version: int | None = None) -> int | None:
        """Return the milliseconds ``key`` has left, ``None`` if it never expires or is absent."""
        try:
            left = self._client.pttl(self._key(key, version))
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from None
        return left if left >= 0 else None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} cache.{self.instance} {self.target}>"
