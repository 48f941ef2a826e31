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

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.core.kvkeys import KVServerKeys, ms
from toolkit_batteries.core.tracing import traced

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


@traced("_try_acquire", "_release", "_refresh", "_extend", "_owner")
class KVServerLock(KVServerKeys, Lock):
    """Leases stored as expiring keys on a key-value server."""

    adapter_name = "kvserver"
    default_prefix = DEFAULT_PREFIX
    scripts = {"_release_script": _RELEASE, "_refresh_script": _REFRESH, "_extend_script": _EXTEND}
    _release_script: Any
    _refresh_script: Any
    _extend_script: Any

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
        self._use_client(client, prefix=prefix, target=target)

    @classmethod
    def open(cls, ctx: OpenContext) -> KVServerLock:
        """Borrow the shared client for the configured server (nothing connects yet)."""
        options = ctx.options
        client, target = cls.borrow(ctx, options, url=options.url)
        return cls(
            client,
            prefix=options.prefix,
            ttl=seconds(options.ttl) or 0.0,
            retry_interval=seconds(options.retry_interval) or 0.0,
            instance=ctx.instance,
            target=target,
        )

    # ------------------------------------------------------------------ primitives

    def _try_acquire(self, name: str, token: str, ttl: float) -> bool:
        with self._unreachable:
            return bool(self._client.set(self.prefix + name, token, nx=True, px=ms(ttl)))

    def _release(self, name: str, token: str) -> bool:
        with self._unreachable:
            return bool(self._release_script(keys=[self.prefix + name], args=[token]))

    def _refresh(self, name: str, token: str, ttl: float) -> bool:
        with self._unreachable:
            return bool(self._refresh_script(keys=[self.prefix + name], args=[token, ms(ttl)]))

    def _extend(self, name: str, token: str, by: float) -> bool:
        with self._unreachable:
            return bool(self._extend_script(keys=[self.prefix + name], args=[token, ms(by)]))

    def _owner(self, name: str) -> str | None:
        with self._unreachable:
            raw = self._client.get(self.prefix + name)
        return None if raw is None else raw.decode(errors="replace")
