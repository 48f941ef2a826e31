"""The ``kvserver`` adapter: one token bucket per key on a Redis-protocol server.

Every decision is one round trip: a Lua script (:data:`SCRIPT`) refills and takes tokens
atomically, so any number of processes share one budget exactly. The script is loaded
once (``SCRIPT LOAD`` when the adapter opens) and called with ``EVALSHA``; when the server
has forgotten it (a restart, ``SCRIPT FLUSH``) the adapter loads it again and retries once.

**Time comes from the server** (``TIME`` inside the script), so the clocks of the
application hosts never matter: every process refills by the same clock. Tests can pass
a ``clock`` instead; its value (seconds) is then sent with each call, and every process
sharing the buckets must use the same clock.

Keys are ``<kvserver.prefix>ratelimit:<key>``: a hash with the tokens and the refill
time in milliseconds. Each write sets ``PEXPIRE`` to ``idle_ttl`` (never less than the
time an empty bucket takes to refill), so idle buckets disappear on the server's own
schedule and ``sweep_interval`` / ``max_entries`` do not apply. Keys over 200 characters
are stored as a prefix plus their SHA-256 (:func:`~toolkit_batteries.ratelimit.base.bounded_key`).
Give the buckets a server whose ``maxmemory-policy`` is ``noeviction``: every bucket has
an expiry, so ``allkeys-*`` and ``volatile-*`` policies alike may push an exhausted bucket
out under the memory pressure a flood of keys creates, and it would come back full.

A server that cannot be reached raises :class:`ServiceUnavailableError` after the
client's bounded connect and socket timeouts (5 s and 3 s; a refused connection fails at
once) instead of hanging. Needs the ``kvserver`` extra (redis-py).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from typing import Any

from toolkit_batteries.core.errors import MissingExtraError, ServiceUnavailableError
from toolkit_batteries.core.kvkeys import SharedClientOpen
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.core.transport import kv_unreachable
from toolkit_batteries.ratelimit.base import (
    Decision,
    Limits,
    RateLimiter,
    RateLimiterClosedError,
    bounded_key,
    check_cost,
    limits_from_options,
)

with MissingExtraError.guard("ratelimit", "kvserver", "kvserver", "redis"):
    from redis import exceptions as redis_errors

__all__ = ["SCRIPT", "SCRIPT_SHA", "KVServerRateLimiter", "bucket_key"]

#: KEYS[1] the bucket; ARGV: rate (tokens/s), burst, cost, ttl (ms), now (ms, or "" to
#: read the server's TIME). Returns {allowed 0/1, tokens left, retry after in ms}.
#: A refused request writes nothing: the next call recomputes the same refill.
SCRIPT = """\
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local now = tonumber(ARGV[5])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if not tokens or not ts then
  tokens = burst
  ts = now
elseif now > ts then
  tokens = math.min(burst, tokens + (now - ts) * rate / 1000)
  ts = now
end
if tokens >= cost then
  tokens = tokens - cost
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(ts))
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return {1, tostring(tokens), '0'}
end
return {0, tostring(tokens), tostring((cost - tokens) * 1000 / rate)}
"""

#: What ``SCRIPT LOAD`` answers for :data:`SCRIPT` (computed here, checked at open).
SCRIPT_SHA = hashlib.sha1(SCRIPT.encode()).hexdigest()  # Redis names scripts by SHA-1


def bucket_key(prefix: str, key: str) -> str:
    """Return the server key of ``key``'s bucket: ``<prefix>ratelimit:<key>``."""
    return f"{prefix}ratelimit:{key}"


@traced("allow", "reset")
class KVServerRateLimiter(SharedClientOpen, RateLimiter):
    """Token buckets shared by every process through one Lua script on the server.

    ``open()`` borrows the container's client for ``kvserver.*``; building loads the script.
    """

    adapter_name = "kvserver"
    settings_of = staticmethod(limits_from_options)

    def __init__(
        self,
        client: Any,
        limits: Limits,
        *,
        prefix: str = "",
        instance: str = "default",
        clock: Callable[[], float] | None = None,
    ) -> None:
        """Wrap a ``redis.Redis`` client and load the script (raise if unreachable)."""
        super().__init__(limits, instance=instance)
        self._client = client
        self._prefix = f"{prefix}ratelimit:"
        self._clock = clock
        self._closed = False
        self._unreachable = kv_unreachable(
            "ratelimit", instance, "the key-value server did not answer", keep_cause=True
        )
        ttl_ms = max(1, math.ceil(limits.forget_after * 1000))
        # The arguments that never change, rendered once.
        self._args = (repr(limits.rate), str(limits.burst))
        self._ttl = str(ttl_ms)
        self._load_script()

    @property
    def prefix(self) -> str:
        """Return the prefix of every bucket key (``<kvserver.prefix>ratelimit:``)."""
        return self._prefix

    def allow(self, key: str, cost: int = 1) -> Decision:
        """Take ``cost`` tokens from ``key``'s bucket on the server if it has them."""
        burst = self.limits.burst
        if cost.__class__ is not int or cost < 0 or cost > burst:
            check_cost(cost, burst)
        if self._closed:
            raise RateLimiterClosedError(self.instance)
        now = "" if self._clock is None else repr(self._clock() * 1000)
        args = (*self._args, cost, self._ttl, now)
        name = self._prefix + bounded_key(key)
        with self._unreachable:
            try:
                allowed, tokens, retry_ms = self._client.evalsha(SCRIPT_SHA, 1, name, *args)
            except redis_errors.NoScriptError:  # the server restarted or flushed scripts
                self._load_script()
                allowed, tokens, retry_ms = self._client.evalsha(SCRIPT_SHA, 1, name, *args)
        left = float(tokens)
        if allowed:
            return Decision(True, int(left), 0.0, burst)
        return Decision(False, int(left), float(retry_ms) / 1000, burst)

    def reset(self, key: str) -> None:
        """Delete ``key``'s bucket on the server."""
        if self._closed:
            raise RateLimiterClosedError(self.instance)
        with self._unreachable:
            self._client.delete(self._prefix + bounded_key(key))

    def close(self) -> None:
        """Refuse later calls; the shared client belongs to the container's registry."""
        self._closed = True

    def _load_script(self) -> None:
        with self._unreachable:
            sha = self._client.script_load(SCRIPT)
        if sha != SCRIPT_SHA:  # pragma: no cover - a server that hashes differently
            raise ServiceUnavailableError(
                "ratelimit", "the server named the script unexpectedly", instance=self.instance
            )
