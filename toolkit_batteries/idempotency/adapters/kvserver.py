"""The ``kvserver`` adapter: idempotency records on a Redis-protocol key-value server.

* A record is a hash ``<prefix><key>`` with fields ``s`` (state), ``t`` (owner token),
  ``f`` (fingerprint) and ``r`` (the encoded response), expiring with the record.
* Reserve, commit and release are each one Lua script, so each is atomic on the server:
  among any number of processes reserving one key, exactly one creates the record.
* With an empty ``kvserver.prefix`` the prefix is ``toolkit:idempotency:<instance>:``.
* The connection keys sit under ``kvserver.`` (``kvserver.addr``, ``kvserver.tls``,
  ...); ``kvserver.url`` is reserved and ignored, as the spec says. The client is the
  container's shared one for the address and database. An unreachable server raises
  :class:`ServiceUnavailableError` at once.

Expiry is the server's clock.
"""

from __future__ import annotations

from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.core.kvkeys import KVServerKeys, ms
from toolkit_batteries.core.tracing import traced

from ..base import DEFAULT_TTL, Idempotency, ReservationState

with MissingExtraError.guard("idempotency", "kvserver", "kvserver", "redis"):
    import redis  # noqa: F401  (the extra's absence is reported at import)

__all__ = ["DEFAULT_PREFIX", "KVServerIdempotency"]

#: Key prefix used when ``kvserver.prefix`` is empty (``{instance}`` is filled in).
DEFAULT_PREFIX = "toolkit:idempotency:{instance}:"

_Found = tuple[ReservationState, str, bytes | None]

# Returns nil after creating the record, or {state, fingerprint, response} of the live one.
_RESERVE = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('HMGET', KEYS[1], 's', 'f', 'r')
end
redis.call('HSET', KEYS[1], 's', 'in_progress', 't', ARGV[1], 'f', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return false
"""
_COMMIT = """
if redis.call('HGET', KEYS[1], 's') ~= 'in_progress' then return 0 end
if ARGV[1] ~= '' and redis.call('HGET', KEYS[1], 't') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 's', 'completed', 'r', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""
_RELEASE = """
if redis.call('HGET', KEYS[1], 's') ~= 'in_progress' then return 0 end
if ARGV[1] ~= '' and redis.call('HGET', KEYS[1], 't') ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
"""


def _found(fields: list[Any]) -> _Found:
    state, fingerprint, payload = fields
    return (
        ReservationState(state.decode()),
        fingerprint.decode() if fingerprint else "",
        payload or None,
    )


@traced("_reserve", "_commit", "_release", "_get", "_delete")
class KVServerIdempotency(KVServerKeys, Idempotency):
    """Idempotency records stored as expiring hashes on a key-value server."""

    adapter_name = "kvserver"
    default_prefix = DEFAULT_PREFIX
    scripts = {"_reserve_script": _RESERVE, "_commit_script": _COMMIT, "_release_script": _RELEASE}
    _reserve_script: Any
    _commit_script: Any
    _release_script: Any

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "",
        ttl: float = DEFAULT_TTL,
        instance: str = "default",
        target: str = "",
    ) -> None:
        """Use ``client`` (a ``redis.Redis``) and keys starting with ``prefix``."""
        super().__init__(ttl=ttl, instance=instance)
        self._use_client(client, prefix=prefix, target=target)

    @classmethod
    def open(cls, ctx: OpenContext) -> KVServerIdempotency:
        """Borrow the shared client for ``kvserver.addr`` (nothing connects yet)."""
        block = ctx.options.kvserver
        client, target = cls.borrow(ctx, block, dedicated=bool(ctx.options.dedicated_pool))
        return cls(
            client,
            prefix=block.prefix,
            ttl=ctx.options.ttl.total_seconds(),
            instance=ctx.instance,
            target=target,
        )

    # ------------------------------------------------------------------ primitives

    def _reserve(self, key: str, token: str, fingerprint: str, ttl: float) -> _Found | None:
        with self._unreachable:
            fields = self._reserve_script(
                keys=[self.prefix + key], args=[token, fingerprint, ms(ttl)]
            )
        return None if fields is None else _found(fields)

    def _commit(self, key: str, payload: bytes, ttl: float, token: str) -> bool:
        with self._unreachable:
            return bool(
                self._commit_script(keys=[self.prefix + key], args=[token, payload, ms(ttl)])
            )

    def _release(self, key: str, token: str) -> bool:
        with self._unreachable:
            return bool(self._release_script(keys=[self.prefix + key], args=[token]))

    def _get(self, key: str) -> _Found | None:
        with self._unreachable:
            fields = self._client.hmget(self.prefix + key, ["s", "f", "r"])
        return None if fields[0] is None else _found(fields)

    def _delete(self, key: str) -> bool:
        with self._unreachable:
            return bool(self._client.delete(self.prefix + key))
