"""The ``kvserver`` adapter: durable queues on a Redis server, shared by many processes.

Keys of a topic ``t`` under ``prefix`` (the braces are a cluster hash tag, so every key
of a topic lives in one slot; each script is given the topic's base name as its one
key and derives the others, which keeps calls small):

================================  ======================================================
``<prefix>queue:{t}:ready``       sorted set: waiting message ids, scored by the time they
                                  become visible (ties: id, which is the push order)
``<prefix>queue:{t}:inflight``    sorted set: delivered ids, scored by lease deadline
``<prefix>queue:{t}:dead``        sorted set: dead ids, scored by time of death
``<prefix>queue:{t}:msgs``        hash: id -> enqueued-at (20 characters) + body
``<prefix>queue:{t}:tries``       hash: id -> attempts
``<prefix>queue:{t}:why``         hash: id -> died-at (20 characters) + reason (dead only)
``<prefix>queue:{t}:seq``         counter behind the ids (16 hex digits, push order)
``<prefix>queue:{t}:waiters``     sorted set: consumers blocked on the topic, scored by
                                  when their registration lapses (server time)
``<prefix>queue:{t}:wake``        list of wake-up tokens for those consumers
================================  ======================================================

Every operation is one Lua script, so it is atomic and costs one round trip: ``pop``
reclaims expired leases (up to 100 per call), takes the first visible id, moves it into
the in-flight set with its deadline and counts the attempt; ``ack`` deletes only while
the delivery still holds its lease. Messages live as fields of a few per-topic hashes,
not as a key each, which keeps a push cheap for the server.

Blocking without a busy loop: a ``pop`` that finds nothing registers the consumer in
``waiters`` in the same script (so no push can slip between the check and the
registration), then blocks in ``BLPOP`` on ``wake`` at most one second at a time (less
when a delayed message or a lease comes due first). A push or nack that makes a message
ready now adds a token only while someone waits, so a busy queue pays nothing for it.
Times are computed in Python from ``queue.clock``; only the waiters' registrations use
the server's clock.

A server that cannot be reached raises
:class:`~toolkit_batteries.core.errors.ServiceUnavailableError` within the client's
connect and read timeouts (5 s and 3 s; at once when the connection is refused); the
next call reconnects and reloads the scripts, so a restarted server is picked up without
reopening the queue.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.core.transport import kv_errors, kv_unreachable

from ..base import REMOTE_OPERATIONS, DeadMessage, Message, Queue, QueueError, to_datetime

with MissingExtraError.guard("queue", "kvserver", "kvserver", "redis"):
    from redis import exceptions as redis_errors

__all__ = ["KVServerQueue"]

#: Longest single BLPOP, in seconds: a delayed message pushed meanwhile (which sends no
#: wake-up token) is noticed within this bound.
MAX_BLOCK = 1.0
#: Shortest BLPOP (a zero timeout would block forever).
MIN_BLOCK = 0.01
#: Ids a single requeue, purge or push_many script handles.
BATCH = 500
#: Width of the time stamp in front of a stored body or reason.
STAMP = 20

# Every script takes one key, the topic's base name ("<prefix>queue:{t}:"), and derives
# the others from it: they share its hash tag, hence its cluster slot. Fewer arguments
# make a call cheaper to send, which is most of its cost.

# Adds one wake-up token per message made ready (n in `count`), only while someone waits.
_WAKE = """
local function wake(base, count)
  if count > 0 and redis.call('ZCARD', base .. 'waiters') > 0 then
    for i = 1, count, 1000 do
      local tokens = {}
      for j = i, math.min(count, i + 999) do tokens[#tokens + 1] = '1' end
      redis.call('RPUSH', base .. 'wake', unpack(tokens))
    end
  end
end
"""

# ARGV: visible at, wake ('1'/'0'), values...
_PUSH = (
    _WAKE
    + """
local base = KEYS[1]
local count = #ARGV - 2
local last = redis.call('INCRBY', base .. 'seq', count)
local ready, msgs = base .. 'ready', base .. 'msgs'
local ids = {}
for i = 1, count do
  local id = string.format('%016x', last - count + i)
  redis.call('HSET', msgs, id, ARGV[2 + i])
  redis.call('ZADD', ready, ARGV[1], id)
  ids[i] = id
end
if ARGV[2] == '1' then wake(base, count) end
return ids
"""
)

# The one-message push: the same, answering a bare id (cheaper to parse than a list).
_PUSH_ONE = (
    _WAKE
    + """
local base = KEYS[1]
local id = string.format('%016x', redis.call('INCR', base .. 'seq'))
redis.call('HSET', base .. 'msgs', id, ARGV[3])
redis.call('ZADD', base .. 'ready', ARGV[1], id)
if ARGV[2] == '1' then wake(base, 1) end
return id
"""
)

# ARGV: now, deadline, flags: '1' when a wake-up token was consumed, else '0', followed
# by the waiter id of a consumer that may block (nothing for one that will not).
# Answers one string, id (16) + attempts (10) + stamped body, when it delivers; else
# {0, next visible time, next lease deadline}, or {2} for an id without a body.
_POP = """
local base = KEYS[1]
local ready, inflight = base .. 'ready', base .. 'inflight'
local waiter = string.sub(ARGV[3], 2)
local expired = redis.call(
  'ZRANGEBYSCORE', inflight, '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, 100)
if #expired > 0 then
  -- The expired leases are the lowest-ranked members: drop them by rank in one call.
  redis.call('ZREMRANGEBYRANK', inflight, 0, #expired / 2 - 1)
  local back = {}
  for i = 1, #expired, 2 do
    back[i], back[i + 1] = expired[i + 1], expired[i]
  end
  redis.call('ZADD', ready, unpack(back))
end
-- The head (lowest score, ties by id) leaves in one call; put back when not yet visible.
local head = redis.call('ZPOPMIN', ready)
if #head == 0 or tonumber(head[2]) > tonumber(ARGV[1]) then
  if #head > 0 then redis.call('ZADD', ready, head[2], head[1]) end
  if waiter ~= '' then
    local server_now = tonumber(redis.call('TIME')[1])
    redis.call('ZREMRANGEBYSCORE', base .. 'waiters', '-inf', server_now)
    redis.call('ZADD', base .. 'waiters', server_now + 3, waiter)
  end
  local lease = redis.call('ZRANGE', inflight, 0, 0, 'WITHSCORES')
  return {0, head[2] or '', lease[2] or ''}
end
local id = head[1]
local value = redis.call('HGET', base .. 'msgs', id)
if not value then return {2} end
redis.call('ZADD', inflight, ARGV[2], id)
local attempts = redis.call('HINCRBY', base .. 'tries', id, 1)
if string.sub(ARGV[3], 1, 1) == '0' then redis.call('LPOP', base .. 'wake') end
if waiter ~= '' then redis.call('ZREM', base .. 'waiters', waiter) end
return id .. string.format('%010d', attempts) .. value
"""

# A delivery holds its lease while its id is in flight, with the attempts it was given,
# and its deadline (the score) is still ahead. ARGV: id, attempts, now, ...
_HOLDS_LEASE = """
local base = KEYS[1]
local deadline = redis.call('ZSCORE', base .. 'inflight', ARGV[1])
if not deadline or tonumber(deadline) <= tonumber(ARGV[3]) then return 0 end
if redis.call('HGET', base .. 'tries', ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('ZREM', base .. 'inflight', ARGV[1])
"""

_ACK = (
    _HOLDS_LEASE
    + """
redis.call('HDEL', base .. 'msgs', ARGV[1])
redis.call('HDEL', base .. 'tries', ARGV[1])
return 1
"""
)

# ARGV: id, attempts, now, visible at, wake ('1'/'0').
_NACK = (
    _WAKE
    + _HOLDS_LEASE
    + """
redis.call('ZADD', base .. 'ready', ARGV[4], ARGV[1])
if ARGV[5] == '1' then wake(base, 1) end
return 1
"""
)

# ARGV: id, attempts, now, stamped reason.
_DEAD = (
    _HOLDS_LEASE
    + """
redis.call('ZADD', base .. 'dead', ARGV[3], ARGV[1])
redis.call('HSET', base .. 'why', ARGV[1], ARGV[4])
return 1
"""
)

# ARGV: limit.
_DEAD_LIST = """
local base = KEYS[1]
local ids = redis.call('ZRANGE', base .. 'dead', 0, tonumber(ARGV[1]) - 1)
local out = {}
for _, id in ipairs(ids) do
  local value = redis.call('HGET', base .. 'msgs', id)
  if value then
    table.insert(out, id)
    table.insert(out, value)
    table.insert(out, redis.call('HGET', base .. 'tries', id) or '0')
    table.insert(out, redis.call('HGET', base .. 'why', id) or '')
  end
end
return out
"""


def _taking_dead(at: int) -> str:
    """Lua that takes dead letters off the dead list into ``taken`` (a prelude, as _WAKE).

    ``ARGV[at]`` is ``'all'`` (the first ``ARGV[at + 1]`` of the list) or ``'ids'`` (those
    from ``ARGV[at + 2]`` on that are dead); requeue and purge differ only in what they do
    with each taken id.
    """
    return f"""
local base = KEYS[1]
local ids
if ARGV[{at}] == 'all' then
  ids = redis.call('ZRANGE', base .. 'dead', 0, tonumber(ARGV[{at + 1}]) - 1)
else
  ids = {{unpack(ARGV, {at + 2})}}
end
local taken = {{}}
for _, id in ipairs(ids) do
  if redis.call('ZREM', base .. 'dead', id) == 1 then table.insert(taken, id) end
end
"""


# ARGV: now, 'all' or 'ids', batch, ids...
_REQUEUE = (
    _WAKE
    + _taking_dead(2)
    + """
for _, id in ipairs(taken) do
  redis.call('HSET', base .. 'tries', id, 0)
  redis.call('HDEL', base .. 'why', id)
  redis.call('ZADD', base .. 'ready', ARGV[1], id)
end
wake(base, #taken)
return #taken
"""
)

# ARGV: 'all' or 'ids', batch, ids...
_PURGE = (
    _taking_dead(1)
    + """
for _, id in ipairs(taken) do
  redis.call('HDEL', base .. 'msgs', id)
  redis.call('HDEL', base .. 'tries', id)
  redis.call('HDEL', base .. 'why', id)
end
return #taken
"""
)

# ARGV: now.
_SIZE = """
local base = KEYS[1]
return redis.call('ZCARD', base .. 'ready')
  + redis.call('ZCOUNT', base .. 'inflight', '-inf', ARGV[1])
"""


def _stamp(epoch: float) -> bytes:
    """Return ``epoch`` as the fixed-width prefix stored in front of a body or reason."""
    return b"%020.6f" % epoch


class _Keys:
    """The keys of one topic."""

    __slots__ = (
        "base",
        "dead",
        "inflight",
        "msgs",
        "ready",
        "seq",
        "tries",
        "waiters",
        "wake",
        "why",
    )

    def __init__(self, base: str) -> None:
        for name in self.__slots__[1:]:
            setattr(self, name, base + name)
        self.base = base


class _Lua:
    """A script's source and SHA-1 digest (what ``EVALSHA`` names it by)."""

    __slots__ = ("sha", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@traced(*REMOTE_OPERATIONS)
class KVServerQueue(Queue):
    """Topics as sorted sets and hashes on a Redis server, driven by Lua scripts."""

    adapter_name = "kvserver"

    def __init__(
        self, client: Any, options: Any, *, instance: str = "default", address: str = ""
    ) -> None:
        super().__init__(options, instance=instance)
        self.client = client
        self.prefix = str(getattr(options, "prefix", "") or "")
        self.address = address
        # ``Redis.evalsha`` is two wrappers around this; the hot path calls it directly.
        self._execute = client.execute_command
        self._unreachable = kv_unreachable(
            self.service_name, instance, "the key-value server is unreachable ({error})"
        )
        #: What ``_unreachable`` translates, caught directly on the per-message path.
        self._down = kv_errors()
        self._push_script = _Lua(_PUSH)
        self._push_one_script = _Lua(_PUSH_ONE)
        self._pop_script = _Lua(_POP)
        self._ack_script = _Lua(_ACK)
        self._nack_script = _Lua(_NACK)
        self._dead_script = _Lua(_DEAD)
        self._dead_list_script = _Lua(_DEAD_LIST)
        self._requeue_script = _Lua(_REQUEUE)
        self._purge_script = _Lua(_PURGE)
        self._size_script = _Lua(_SIZE)
        self._keys_cache: dict[str, _Keys] = {}
        #: Wake lists this process is blocked on, so close() can wake its own pops.
        self._blocked: Counter[str] = Counter()
        self._blocked_lock = threading.Lock()

    @classmethod
    def open(cls, ctx: OpenContext) -> KVServerQueue:
        """Borrow the shared client for ``url`` (else ``addr``) and check the server answers."""
        from toolkit_batteries.core.pools import resolve_kv_address

        options = ctx.options
        url = str(getattr(options, "url", "") or "")
        address = resolve_kv_address(ctx.service, options, instance=ctx.instance, url=url)
        client = ctx.pools.kvserver(
            ctx.service,
            options,
            instance=ctx.instance,
            url=url,
            dedicated=bool(getattr(options, "dedicated_pool", False)),
        )
        queue = cls(client, options, instance=ctx.instance, address=address.describe())
        queue._call(client.ping)
        return queue

    # ------------------------------------------------------------------ helpers

    def _keys(self, topic: str) -> _Keys:
        """Return the keys of ``topic``."""
        keys = self._keys_cache.get(topic)
        if keys is None:
            keys = _Keys(f"{self.prefix}queue:{{{topic}}}:")
            if len(self._keys_cache) < 10000:
                self._keys_cache[topic] = keys
        return keys

    def _call(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a client call; turn connection trouble into ServiceUnavailableError."""
        try:
            with self._unreachable:
                return function(*args, **kwargs)
        except redis_errors.RedisError as exc:
            raise self._refused(exc) from None

    def _script(self, script: _Lua, key: str, args: Sequence[Any]) -> Any:
        """Run a script on the topic's base key by its digest, loading it when missing.

        Every message passes here three times a cycle (push, pop, ack), so it sends
        ``EVALSHA`` straight through ``execute_command`` and catches errors with plain
        ``except`` clauses: the same translation as ``_call`` without its context
        manager, two calls fewer each time.
        """
        try:
            try:
                return self._execute("EVALSHA", script.sha, 1, key, *args)
            except redis_errors.NoScriptError:  # a restarted or flushed server
                self.client.script_load(script.source)
                return self._execute("EVALSHA", script.sha, 1, key, *args)
        except self._down as exc:
            raise self._unreachable.error(exc) from None
        except redis_errors.RedisError as exc:
            raise self._refused(exc) from None

    def _refused(self, exc: Exception) -> QueueError:
        """Return the error of a command the server answered with a refusal."""
        return QueueError(
            f"queue.{self.instance}: the key-value server refused a command ({type(exc).__name__})"
        )

    # ------------------------------------------------------------------ operations

    def _push(self, topic: str, body: bytes, delay: float) -> str:
        now = self.clock()
        args = (repr(now + delay), "0" if delay > 0 else "1", _stamp(now) + body)
        return _text(self._script(self._push_one_script, self._keys(topic).base, args))

    def _push_many(self, topic: str, bodies: list[bytes], delay: float) -> list[str]:
        k = self._keys(topic)
        now = self.clock()
        stamp = _stamp(now)
        head = (repr(now + delay), "0" if delay > 0 else "1")
        ids: list[str] = []
        for start in range(0, len(bodies), BATCH):
            values = [stamp + body for body in bodies[start : start + BATCH]]
            found = self._script(self._push_script, k.base, (*head, *values))
            ids.extend(_text(message_id) for message_id in found)
        return ids

    def _pop(self, topic: str, wait: float, lease: float) -> Message | None:
        k = self._keys(topic)
        base = k.base
        # A consumer that may block registers as a waiter, so that pushes send tokens.
        if wait > 0:
            give_up = time.monotonic() + wait
            waiter = uuid.uuid4().hex
        else:  # a poll: one script call, no clock read to wait on
            give_up, waiter = 0.0, ""
        consumed = "0"
        registered = False
        try:
            while True:
                now = self.clock()
                result = self._script(
                    self._pop_script, base, (repr(now), repr(now + lease), consumed + waiter)
                )
                consumed = "0"
                if type(result) is bytes:  # delivered: id, attempts, stamp, body
                    registered = False  # the script removed the registration
                    return Message(
                        result[:16].decode(),
                        topic,
                        result[26 + STAMP :],
                        int(result[16:26]),
                        to_datetime(float(result[26 : 26 + STAMP])),
                    )
                status = int(result[0])
                if status == 2:  # an id without its body (deleted behind our back): skip it
                    continue
                if not waiter:
                    return None
                registered = True
                remaining = give_up - time.monotonic()
                if remaining <= 0:
                    return None
                block = min(remaining, MAX_BLOCK)
                for due in result[1:]:
                    if due:
                        block = min(block, float(due) - now)
                if self._block(k.wake, max(block, MIN_BLOCK)) is not None:
                    consumed = "1"
                self._check_open()  # a close wakes the blocked pop: it ends here
        finally:
            if registered:
                with contextlib.suppress(redis_errors.RedisError):
                    self.client.zrem(k.waiters, waiter)

    def _block(self, wake: str, seconds: float) -> Any:
        """Wait up to ``seconds`` for a wake-up token on ``wake``."""
        with self._blocked_lock:
            self._blocked[wake] += 1
        try:
            return self._call(self.client.blpop, [wake], timeout=seconds)
        finally:
            with self._blocked_lock:
                self._blocked[wake] -= 1
                if self._blocked[wake] <= 0:
                    del self._blocked[wake]

    def _ack(self, message: Message) -> bool:
        k = self._keys(message.topic)
        args = (message.id, str(message.attempts), repr(self.clock()))
        return bool(self._script(self._ack_script, k.base, args))

    def _nack(self, message: Message, delay: float) -> bool:
        k = self._keys(message.topic)
        now = self.clock()
        args = (
            message.id,
            str(message.attempts),
            repr(now),
            repr(now + delay),
            "0" if delay > 0 else "1",
        )
        return bool(self._script(self._nack_script, k.base, args))

    def _dead(self, message: Message, reason: str) -> bool:
        k = self._keys(message.topic)
        now = self.clock()
        args = (message.id, str(message.attempts), repr(now), _stamp(now) + reason.encode())
        return bool(self._script(self._dead_script, k.base, args))

    def _dead_messages(self, topic: str, limit: int) -> list[DeadMessage]:
        k = self._keys(topic)
        flat = self._script(self._dead_list_script, k.base, (limit,))
        found = []
        for i in range(0, len(flat), 4):
            message_id, value, attempts, why = flat[i : i + 4]
            value, why = bytes(value), bytes(why)
            found.append(
                DeadMessage(
                    _text(message_id),
                    topic,
                    value[STAMP:],
                    int(attempts or 0),
                    to_datetime(float(value[:STAMP])),
                    why[STAMP:].decode(errors="replace"),
                    to_datetime(float(why[:STAMP] or 0)),
                )
            )
        return found

    def _batched(self, script: _Lua, key: str, head: Sequence[str], ids: Any) -> int:
        """Run a requeue or purge script over every dead id, or over ``ids``, in batches."""
        total = 0
        if ids is None:
            while True:
                done = int(self._script(script, key, (*head, "all", BATCH)))
                total += done
                if done < BATCH:
                    return total
        for start in range(0, len(ids), BATCH):
            chunk = ids[start : start + BATCH]
            total += int(self._script(script, key, (*head, "ids", len(chunk), *chunk)))
        return total

    def _requeue_dead(self, topic: str, ids: list[str] | None) -> int:
        k = self._keys(topic)
        return self._batched(self._requeue_script, k.base, (repr(self.clock()),), ids)

    def _purge_dead(self, topic: str, ids: list[str] | None) -> int:
        k = self._keys(topic)
        return self._batched(self._purge_script, k.base, (), ids)

    def _size(self, topic: str) -> int:
        k = self._keys(topic)
        return int(self._script(self._size_script, k.base, (repr(self.clock()),)))

    def _close(self) -> None:
        """Wake this process's blocked pops with a spare token each, so they see the close."""
        with self._blocked_lock:
            blocked = dict(self._blocked)
        for wake, count in blocked.items():
            with contextlib.suppress(redis_errors.RedisError):  # else they wake within MAX_BLOCK
                self.client.rpush(wake, *(["1"] * count))

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<KVServerQueue queue.{self.instance} {self.address} {state}>"
