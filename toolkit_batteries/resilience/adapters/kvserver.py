"""The ``kvserver`` adapter: breaker state shared by every process through Redis.

One hash per breaker, ``<kvserver.prefix>:breaker:<name>`` (the prefix defaults to
``resilience``), holds the state, its generation, when it entered that state, the
consecutive failures, the half-open probes in flight and their successes, and the
rolling-window buckets as fixed slots (``i<n>`` bucket index, ``s<n>`` successes,
``f<n>`` failures; slot ``n`` is the bucket index modulo the number of buckets, so the
hash never grows). Every transition runs inside one Lua script (:data:`SCRIPT`, loaded
once, called with ``EVALSHA``, reloaded on ``NOSCRIPT``), so two processes can never both
move a breaker. Time is the server's ``TIME``, so hosts' clocks do not matter; tests may
inject a clock instead. Each write sets ``PEXPIRE`` to twice the longer of the window and
the open timeout, so breakers nobody uses disappear.

The bulkhead, the timeout and the retries stay in each process.

**When the server is unreachable** the breaker cannot be consulted. The call then goes
ahead as if the breaker were closed (and its outcome is not recorded), with a warning
at most every 10 s: a resilience layer must not turn a Redis outage into an outage of
every guarded dependency. After a failure the store is not asked again for
:data:`RETRY_STORE_AFTER` seconds, so calls do not each pay a connection timeout.
``breaker_state()`` raises :class:`ServiceUnavailableError`.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from typing import Any, Self

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.core.transport import kv_errors, kv_unreachable
from toolkit_batteries.resilience.backoff import Random
from toolkit_batteries.resilience.base import Policy, PolicySettings, settings_from_options
from toolkit_batteries.resilience.breaker import BreakerConfig, Permit, Refused

with MissingExtraError.guard("resilience", "kvserver", "kvserver", "redis"):
    from redis import exceptions as redis_errors

__all__ = ["SCRIPT", "SCRIPT_SHA", "KVServerBreakerStore", "KVServerPolicy", "breaker_key"]

logger = logging.getLogger("toolkit.resilience")

#: KEYS[1] the breaker hash. ARGV: op ("acquire" | "record" | "state" ), now in ms or ""
#: for the server's TIME, max_requests, bucket ms, buckets, timeout ms, min_requests,
#: failure_ratio, consecutive_failures, ttl ms, then for "record": generation, probe
#: (0/1), success (0/1). Returns {state, generation, allowed or probe flag, retry ms}.
SCRIPT = """\
local key = KEYS[1]
local op = ARGV[1]
local now = tonumber(ARGV[2])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local max_requests = tonumber(ARGV[3])
local bucket_ms = tonumber(ARGV[4])
local buckets = tonumber(ARGV[5])
local timeout = tonumber(ARGV[6])
local min_requests = tonumber(ARGV[7])
local ratio = tonumber(ARGV[8])
local consecutive_limit = tonumber(ARGV[9])
local ttl = ARGV[10]

local h = redis.call('HMGET', key, 'state', 'gen', 'since', 'cons', 'inflight', 'succ')
local state = h[1] or 'closed'
local gen = tonumber(h[2]) or 0
local since = tonumber(h[3]) or 0
local cons = tonumber(h[4]) or 0
local inflight = tonumber(h[5]) or 0
local succ = tonumber(h[6]) or 0
local changed = false

local function move(to)
  state = to
  gen = gen + 1
  since = now
  cons = 0
  inflight = 0
  succ = 0
  for n = 0, buckets - 1 do
    redis.call('HDEL', key, 'i' .. n, 's' .. n, 'f' .. n)
  end
  changed = true
end

local function save()
  redis.call('HSET', key, 'state', state, 'gen', gen, 'since', tostring(since),
    'cons', cons, 'inflight', inflight, 'succ', succ)
  redis.call('PEXPIRE', key, ttl)
end

-- time-driven transitions
if state == 'open' and now >= since + timeout then
  move('half-open')
elseif state == 'half-open' and inflight >= max_requests and now >= since + timeout then
  move('half-open')
end

if op == 'state' then
  if changed then save() end
  return {state, gen, 0, '0'}
end

if op == 'acquire' then
  if state == 'open' then
    if changed then save() end
    return {state, gen, 0, tostring(since + timeout - now)}
  end
  if state == 'half-open' then
    if inflight >= max_requests then
      if changed then save() end
      return {state, gen, 0, '0'}
    end
    inflight = inflight + 1
    save()
    return {state, gen, 2, '0'}
  end
  if changed then save() end
  return {state, gen, 1, '0'}
end

-- op == 'record'
local permit_gen = tonumber(ARGV[11])
local probe = ARGV[12] == '1'
local success = ARGV[13] == '1'
if permit_gen ~= gen then
  if changed then save() end
  return {state, gen, 0, '0'}
end
if state == 'half-open' then
  if probe then
    inflight = math.max(0, inflight - 1)
    if not success then
      move('open')
    else
      succ = succ + 1
      if succ >= max_requests then move('closed') end
    end
    save()
  elseif changed then
    save()
  end
  return {state, gen, 0, '0'}
end
if state ~= 'closed' then
  if changed then save() end
  return {state, gen, 0, '0'}
end
local index = math.floor(now / bucket_ms)
local slot = index % buckets
local stored = tonumber(redis.call('HGET', key, 'i' .. slot))
if stored ~= index then
  redis.call('HSET', key, 'i' .. slot, index, 's' .. slot, 0, 'f' .. slot, 0)
end
if success then
  redis.call('HINCRBY', key, 's' .. slot, 1)
  cons = 0
else
  redis.call('HINCRBY', key, 'f' .. slot, 1)
  cons = cons + 1
  local trip = consecutive_limit > 0 and cons >= consecutive_limit
  if not trip then
    local total, failures = 0, 0
    for n = 0, buckets - 1 do
      local v = redis.call('HMGET', key, 'i' .. n, 's' .. n, 'f' .. n)
      local bucket = tonumber(v[1])
      if bucket and bucket > index - buckets then
        total = total + tonumber(v[2]) + tonumber(v[3])
        failures = failures + tonumber(v[3])
      end
    end
    trip = total >= min_requests and failures >= ratio * total
  end
  if trip then move('open') end
end
save()
return {state, gen, 0, '0'}
"""

#: What ``SCRIPT LOAD`` answers for :data:`SCRIPT`.
SCRIPT_SHA = hashlib.sha1(SCRIPT.encode()).hexdigest()  # Redis names scripts by SHA-1

_UNREACHABLE = kv_errors()
#: Seconds between two "breaker store unreachable" warnings.
WARN_EVERY = 10.0
#: Seconds during which an unreachable store is not asked again.
RETRY_STORE_AFTER = 1.0


def breaker_key(prefix: str, name: str) -> str:
    """Return the hash of breaker ``name``: ``<prefix>:breaker:<name>``."""
    namespace = prefix if not prefix or prefix.endswith(":") else prefix + ":"
    return f"{namespace}breaker:{name}"


@traced("acquire", "record", "state", "reset")
class KVServerBreakerStore:
    """Breaker state in Redis hashes, moved only by :data:`SCRIPT`."""

    #: The battery its spans name (``resilience.acquire``, ...).
    service_name = "resilience"

    def __init__(
        self, client: Any, config: BreakerConfig, *, prefix: str, instance: str = "default"
    ) -> None:
        self._client = client
        self.config = config
        self._prefix = prefix
        self._instance = instance
        self._unreachable = kv_unreachable(
            "resilience", instance, "the key-value server did not answer", keep_cause=True
        )
        self._warned = -WARN_EVERY
        self._skip_until = 0.0
        ttl = 2 * max(config.interval_ms, config.timeout_ms)
        self._args = (
            str(config.max_requests),
            repr(config.bucket_ms),
            str(config.buckets),
            repr(config.timeout_ms),
            str(config.min_requests),
            repr(config.failure_ratio),
            str(config.consecutive_failures),
            str(max(1, int(ttl))),
        )

    @property
    def instance(self) -> str:
        """The resilience instance this store serves (a span attribute)."""
        return self._instance

    def key(self, name: str) -> str:
        """Return the server key of breaker ``name``."""
        return breaker_key(self._prefix, name)

    def load(self) -> None:
        """Load the script (at open); raise :class:`ServiceUnavailableError` if unreachable."""
        with self._unreachable:
            self._client.script_load(SCRIPT)

    def _run(self, op: str, name: str, now_ms: float | None, *extra: str) -> list[Any]:
        now = "" if now_ms is None else repr(now_ms)
        args = (op, now, *self._args, *extra)
        key = self.key(name)
        try:
            return self._client.evalsha(SCRIPT_SHA, 1, key, *args)
        except redis_errors.NoScriptError:
            self._client.script_load(SCRIPT)
            return self._client.evalsha(SCRIPT_SHA, 1, key, *args)

    def _degraded(self, exc: BaseException) -> None:
        now = time.monotonic()
        self._skip_until = now + RETRY_STORE_AFTER
        if now - self._warned >= WARN_EVERY:
            self._warned = now
            logger.warning(
                "resilience.%s: breaker store unreachable (%s); calls proceed as if the "
                "breaker were closed",
                self._instance,
                type(exc).__name__,
            )

    def acquire(self, name: str, now_ms: float | None) -> Permit | None:
        """Let a call through or raise :class:`Refused`; ``None`` when the server is away."""
        if self._skip_until and time.monotonic() < self._skip_until:
            return None
        try:
            state, generation, flag, retry = self._run("acquire", name, now_ms)
        except _UNREACHABLE as exc:
            self._degraded(exc)
            return None
        if flag == 0:
            raise Refused(state.decode(), float(retry))
        return Permit(int(generation), flag == 2)

    def record(self, name: str, permit: Permit | None, success: bool, now_ms: float | None) -> None:
        """Count one outcome (skipped when the server is away)."""
        if permit is None:
            return
        extra = (str(permit.generation), "1" if permit.probe else "0", "1" if success else "0")
        try:
            self._run("record", name, now_ms, *extra)
        except _UNREACHABLE as exc:
            self._degraded(exc)

    def state(self, name: str, now_ms: float | None) -> str:
        """Return the state a call arriving now would find."""
        with self._unreachable:
            return self._run("state", name, now_ms)[0].decode()

    def reset(self, name: str) -> None:
        """Delete the breaker's hash: it is closed with empty counts."""
        with self._unreachable:
            self._client.delete(self.key(name))


class KVServerPolicy(Policy):
    """A policy whose circuit breaker is shared through the key-value server."""

    adapter_name = "kvserver"

    def __init__(
        self,
        settings: PolicySettings,
        client: Any,
        *,
        prefix: str = "resilience",
        instance: str = "default",
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        rng: Random | None = None,
        server_time: bool = True,
    ) -> None:
        """Build the policy; with ``server_time`` false the breaker uses ``clock`` (tests)."""
        store = None
        if settings.breaker is not None:
            store = KVServerBreakerStore(client, settings.breaker, prefix=prefix, instance=instance)
        super().__init__(
            settings,
            store,
            instance=instance,
            clock=clock,
            sleep=sleep,
            rng=rng,
            store_uses_clock=not server_time,
        )

    @property
    def store(self) -> KVServerBreakerStore | None:
        """Return the breaker store (``None`` when the breaker is disabled)."""
        return self._store  # type: ignore[return-value]

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        """Borrow the container's client for ``kvserver.*``; load the script if a breaker."""
        settings = settings_from_options(ctx.options, instance=ctx.instance)
        prefix = ctx.options.kvserver.prefix
        policy = cls(settings, ctx.kvserver_client(), prefix=prefix, instance=ctx.instance)
        if policy.store is not None:
            policy.store.load()
        return policy
