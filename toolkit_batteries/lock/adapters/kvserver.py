"""The ``kvserver`` adapter: leases on a Redis-protocol key-value server.

* Acquire is ``SET <key> <token> NX PX <ttl>``: one atomic command, so among any number
  of processes exactly one gets a free name.
* Release, refresh and extend are Lua scripts that compare the stored token with the
  lease's before they delete or re-expire the key, so a holder whose lease expired (and
  was re-acquired by someone else) changes nothing.
* Keys are ``<prefix><name>``; with an empty ``prefix`` the prefix is
  ``toolkit:lock:<instance>:``, so two instances on one server never share names.
* The client is the container's shared one for the address and database (``url`` wins
  over ``addr``; ``require_tls`` fails before connecting). An unreachable server raises
  :class:`ServiceUnavailableError` at once; the next call reconnects.

Time is the server's: expiry does not depend on the clocks of the clients.
"""

from __future__ import annotations

from typing import Any

from toolkit_batteries.core.adapter import ClosedResource, OpenContext
from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.core.transport import kv_unreachable

from ..base import Lock, seconds

with MissingExtraError.guard("lock", "kvserver", "kvserver", "redis"):
    import redis  # noqa: F401  (the extra's absence is reported at import)

__all__ = ["DEFAULT_PREFIX", "KVServerLock"]

#: Key prefix used when the ``prefix`` option is empty (``{instance}`` is filled in).
DEFAULT_PREFIX = "toolkit:lock:{instance}:"


_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""
_REFRESH = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_EXTEND = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then return 0 end
return redis.call('PEXPIRE', KEYS[1], left + tonumber(ARGV[2]))
"""


def _ms(value: float) -> int:
    return max(1, int(value * 1000))


@traced("_try_acquire", "_release", "_refresh", "_extend", "_owner")
class KVServerLock(Lock):
    """Leases stored as expiring keys on a key-value server."""

    adapter_name = "kvserver"

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "",
        ttl: float = 30.0,
        retry_interval: float = 0.05,
        instance: str = "default",
        target: str = "",
    ) -> None:
        """Use ``client`` (a ``redis.Redis``) and keys starting with ``prefix``."""
        super().__init__(ttl=ttl, retry_interval=retry_interval, instance=instance)
        self._client = client
        self.prefix = prefix or DEFAULT_PREFIX.format(instance=instance)
        self.target = target
        self._unreachable = kv_unreachable(self.service_name, instance)
        self._release_script = client.register_script(_RELEASE)
        self._refresh_script = client.register_script(_REFRESH)
        self._extend_script = client.register_script(_EXTEND)

    @classmethod
    def open(cls, ctx: OpenContext) -> KVServerLock:
        """Borrow the shared client for the configured server (nothing connects yet)."""
        from toolkit_batteries.core.pools import resolve_kv_address

        options = ctx.options
        address = resolve_kv_address(ctx.service, options, instance=ctx.instance, url=options.url)
        client = ctx.pools.kvserver(ctx.service, options, instance=ctx.instance, url=options.url)
        return cls(
            client,
            prefix=options.prefix,
            ttl=seconds(options.ttl) or 0.0,
            retry_interval=seconds(options.retry_interval) or 0.0,
            instance=ctx.instance,
            target=address.describe(),
        )

    # ------------------------------------------------------------------ primitives

    def _try_acquire(self, name: str, token: str, ttl: float) -> bool:
        with self._unreachable:
            return bool(self._client.set(self.prefix + name, token, nx=True, px=_ms(ttl)))

    def _release(self, name: str, token: str) -> bool:
        with self._unreachable:
            return bool(self._release_script(keys=[self.prefix + name], args=[token]))

    def _refresh(self, name: str, token: str, ttl: float) -> bool:
        with self._unreachable:
            return bool(self._refresh_script(keys=[self.prefix + name], args=[token, _ms(ttl)]))

    def _extend(self, name: str, token: str, by: float) -> bool:
        with self._unreachable:
            return bool(self._extend_script(keys=[self.prefix + name], args=[token, _ms(by)]))

    def _owner(self, name: str) -> str | None:
        with self._unreachable:
            raw = self._client.get(self.prefix + name)
        return None if raw is None else raw.decode(errors="replace")

    def ttl_ms(self, name: str) -> int | None:
        """Return the milliseconds left on ``name``'s lease, or ``None`` when it is free."""
        with self._unreachable:
            left = self._client.pttl(self.prefix + name)
        return left if left >= 0 else None

    def close(self) -> None:
        """Stop using the client; the container's registry closes it."""
        closed = ClosedResource(self.service_name, self.instance)
        self._client = self._release_script = self._refresh_script = self._extend_script = closed

    def __repr__(self) -> str:
        return f"<{type(self).__name__} lock.{self.instance} {self.target}>"
