"""The ``kvserver`` adapter: a cache on a Redis-protocol key-value server.

* The client comes from the container's registry (``ctx.pools.kvserver``): one per
  address and database, shared with every other service pointed at the same server,
  unless ``dedicated_pool`` is set. ``url`` wins over ``addr``; ``tls``/``rediss://``
  get a TLS 1.2 floor; ``require_tls`` fails before any connection.
* Every key is stored under a namespace, ``toolkit:cache:<instance>:``, followed by the
  key Django's rules build (``KEY_PREFIX:VERSION:key``), so :meth:`clear` deletes this
  cache's keys and nothing else (Django's own ``RedisCache.clear`` flushes the database).
* Integers are stored as decimal text, so :meth:`incr` is one atomic server-side
  ``INCRBY`` that keeps the key's expiry; every other value is pickled. Expiry is
  ``SET ... PX`` in milliseconds, so fractional timeouts work.
* A server that cannot be reached raises :class:`ServiceUnavailableError` at once
  (bounded connect and socket timeouts, no retry loop); the next call reconnects.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Mapping
from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import MissingExtraError, ServiceUnavailableError

try:
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import ResponseError, WatchError
    from redis.exceptions import TimeoutError as RedisTimeoutError
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("cache", "kvserver", "kvserver", "redis") from None

from ..base import DEFAULT_TIMEOUT, Cache, ClosedResource

__all__ = ["KVServerCache", "glob_escape"]

_UNREACHABLE = (RedisConnectionError, RedisTimeoutError)
_PROTOCOL = pickle.HIGHEST_PROTOCOL
_INT64 = range(-(2**63), 2**63)
_dumps = pickle.dumps
_loads = pickle.loads
#: Keys deleted per UNLINK call by clear().
_CLEAR_BATCH = 500

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


def _encode(value: Any) -> bytes | int:
    if type(value) is int and value in _INT64:
        return value
    return _dumps(value, _PROTOCOL)


def _decode(raw: bytes) -> Any:
    return _loads(raw) if raw[:1] == b"\x80" else int(raw)


class KVServerCache(Cache):
    """A cache whose entries live on a key-value server."""

    adapter_name = "kvserver"

    def __init__(
        self,
        client: Any,
        params: Mapping[str, Any] | None = None,
        *,
        namespace: str,
        instance: str = "default",
        target: str = "",
    ) -> None:
        """Use ``client`` (a ``redis.Redis``) and store every key under ``namespace``."""
        super().__init__(params, instance=instance)
        self._client = client
        self.namespace = namespace
        self.target = target
        self._incr = client.register_script(_INCR)
        self._persist = client.register_script(_PERSIST)

    @classmethod
    def open(cls, ctx: OpenContext) -> KVServerCache:
        """Borrow the shared client for the configured server (nothing connects yet)."""
        from toolkit_batteries.core.pools import resolve_kv_address

        options = ctx.options
        address = resolve_kv_address(ctx.service, options, instance=ctx.instance, url=options.url)
        client = ctx.pools.kvserver(
            ctx.service,
            options,
            instance=ctx.instance,
            url=options.url,
            dedicated=bool(options.dedicated_pool),
        )
        cache = cls(
            client,
            namespace=f"toolkit:cache:{ctx.instance}:",
            instance=ctx.instance,
            target=address.describe(),
        )
        if options.verbose:
            ctx.logger.info(
                "cache.%s: kvserver at %s",
                ctx.instance,
                cache.target,
                extra={"service": "cache", "instance": ctx.instance},
            )
        return cache

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
        return default if raw is None else _decode(raw)

    def get_many(self, keys: Iterable[str], version: int | None = None) -> dict[str, Any]:
        """Return the values of ``keys`` that exist (one ``MGET``)."""
        made = {self._key(key, version): key for key in keys}
        if not made:
            return {}
        try:
            values = self._client.mget(list(made))
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from None
        return {
            original: _decode(raw)
            for original, raw in zip(made.values(), values, strict=True)
            if raw is not None
        }

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
                self._client.set(key, _encode(value))
            elif ms == 0:
                self._client.delete(key)
            else:
                self._client.set(key, _encode(value), px=ms)
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
            return bool(self._client.set(key, _encode(value), nx=True, px=ms))
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
                    pipe.set(made, _encode(value), px=ms)
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
        """Add to a pickled number with an optimistic transaction (WATCH/MULTI)."""
        with self._client.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    if raw is None:
                        pipe.unwatch()
                        return None
                    value = _decode(raw) + delta
                    pipe.multi()
                    pipe.set(key, _encode(value), keepttl=True)
                    pipe.execute()
                    return value
                except WatchError:
                    continue

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

    def close(self, **kwargs: Any) -> None:
        """Stop using the client; the container's registry closes it."""
        closed = ClosedResource(self.service_name, self.instance)
        self._client = self._incr = self._persist = closed

    def __repr__(self) -> str:
        return f"<{type(self).__name__} cache.{self.instance} {self.target}>"
