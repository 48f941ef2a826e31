"""The ``memory`` adapter (default): queues in this process, for development and tests.

Each topic keeps its waiting messages (ready and delayed) in one heap ordered by the
time they become visible, then by push order, and its deliveries in flight in a second
heap ordered by lease deadline; an expired lease puts the message back into the first
heap when the next ``pop`` looks. ``buffer`` (10000) bounds the waiting messages of a
topic: a push beyond it raises :class:`~toolkit_batteries.queue.base.QueueFullError`.
Blocked pops wait on a condition variable that pushes and nacks notify. Nothing
survives the process, so a crash loses every message: use ``kvserver`` or ``db`` where
that matters.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from toolkit_batteries.core.adapter import OpenContext

from ..base import DeadMessage, Message, Queue, QueueFullError, to_datetime

__all__ = ["MemoryQueue"]

#: Default of the ``buffer`` option: waiting messages per topic.
DEFAULT_BUFFER = 10000


@dataclass(slots=True)
class _Record:
    """One stored message."""

    body: bytes
    enqueued_at: float
    attempts: int = 0
    #: Lease deadline while in flight, else ``None``.
    deadline: float | None = None
    reason: str = ""
    died_at: float = 0.0


@dataclass(slots=True)
class _Topic:
    records: dict[str, _Record] = field(default_factory=dict)
    #: (visible_at, sequence, id) of waiting messages.
    waiting: list[tuple[float, int, str]] = field(default_factory=list)
    #: (deadline, sequence, id) of deliveries; stale entries are skipped lazily.
    leases: list[tuple[float, int, str]] = field(default_factory=list)
    #: id -> None, in order of death.
    dead: dict[str, None] = field(default_factory=dict)


class MemoryQueue(Queue):
    """Topics held in dictionaries and heaps, guarded by one condition variable."""

    adapter_name = "memory"

    def __init__(self, options: object, *, instance: str = "default") -> None:
        super().__init__(options, instance=instance)
        self.buffer = int(getattr(options, "buffer", 0) or 0) or DEFAULT_BUFFER
        self._cond = threading.Condition()
        self._topics: dict[str, _Topic] = {}
        self._sequence = itertools.count(1)

    @classmethod
    def open(cls, ctx: OpenContext) -> MemoryQueue:
        """Open an empty in-process queue."""
        return cls(ctx.options, instance=ctx.instance)

    # ------------------------------------------------------------------ helpers

    def _topic(self, name: str) -> _Topic:
        topic = self._topics.get(name)
        if topic is None:
            topic = self._topics[name] = _Topic()
        return topic

    def _reclaim(self, topic: _Topic, now: float) -> None:
        """Put every message whose lease expired back among the waiting ones."""
        leases = topic.leases
        while leases and leases[0][0] <= now:
            deadline, sequence, message_id = heapq.heappop(leases)
            record = topic.records.get(message_id)
            if record is None or record.deadline != deadline:
                continue  # acknowledged, nacked or dead since
            record.deadline = None
            heapq.heappush(topic.waiting, (deadline, sequence, message_id))

    def _live_delivery(self, message: Message, now: float) -> tuple[_Topic, _Record] | None:
        """Return the message's state if this delivery still holds its lease."""
        topic = self._topics.get(message.topic)
        if topic is None:
            return None
        record = topic.records.get(message.id)
        if (
            record is None
            or record.deadline is None
            or record.deadline <= now
            or record.attempts != message.attempts
        ):
            return None
        return topic, record

    # ------------------------------------------------------------------ operations

    def _push(self, topic: str, body: bytes, delay: float) -> str:
        return self._push_many(topic, [body], delay)[0]

    def _push_many(self, topic: str, bodies: list[bytes], delay: float) -> list[str]:
        now = self.clock()
        ids = []
        with self._cond:
            self._check_open()
            state = self._topic(topic)
            if len(state.waiting) + len(bodies) > self.buffer:
                raise QueueFullError(self.instance, topic, self.buffer)
            for body in bodies:
                sequence = next(self._sequence)
                message_id = f"{sequence:016x}"
                state.records[message_id] = _Record(body, now)
                heapq.heappush(state.waiting, (now + delay, sequence, message_id))
                ids.append(message_id)
            self._cond.notify(len(bodies))
        return ids

    def _pop(self, topic: str, wait: float, lease: float) -> Message | None:
        give_up = time.monotonic() + wait
        with self._cond:
            while True:
                self._check_open()
                now = self.clock()
                state = self._topic(topic)
                self._reclaim(state, now)
                waiting = state.waiting
                if waiting and waiting[0][0] <= now:
                    _, sequence, message_id = heapq.heappop(waiting)
                    record = state.records[message_id]
                    record.attempts += 1
                    record.deadline = now + lease
                    heapq.heappush(state.leases, (record.deadline, sequence, message_id))
                    enqueued = to_datetime(record.enqueued_at)
                    return Message(message_id, topic, record.body, record.attempts, enqueued)
                remaining = give_up - time.monotonic()
                if remaining <= 0:
                    return None
                # Wake for a push, or when the next delayed message or lease comes due.
                due = [entry[0] for entry in (waiting[:1] + state.leases[:1])]
                if due:
                    remaining = min(remaining, max(0.001, min(due) - now))
                self._cond.wait(remaining)

    def _settle(self, message: Message, apply: Callable[[_Topic, _Record, float], None]) -> bool:
        """Run ``apply(topic, record, now)`` under the lock if the delivery holds its lease.

        ack, nack and dead differ only in what they do to a live delivery; a stale one
        (lease expired, redelivered, already settled) changes nothing and returns False.
        """
        now = self.clock()
        with self._cond:
            self._check_open()
            found = self._live_delivery(message, now)
            if found is None:
                return False
            apply(*found, now)
            return True

    def _ack(self, message: Message) -> bool:
        def forget(topic: _Topic, _record: _Record, _now: float) -> None:
            del topic.records[message.id]

        return self._settle(message, forget)

    def _nack(self, message: Message, delay: float) -> bool:
        def redeliver(topic: _Topic, record: _Record, now: float) -> None:
            record.deadline = None
            heapq.heappush(topic.waiting, (now + delay, int(message.id, 16), message.id))
            self._cond.notify()

        return self._settle(message, redeliver)

    def _dead(self, message: Message, reason: str) -> bool:
        def bury(topic: _Topic, record: _Record, now: float) -> None:
            record.deadline = None
            record.reason = reason
            record.died_at = now
            topic.dead[message.id] = None

        return self._settle(message, bury)

    def _dead_messages(self, topic: str, limit: int) -> list[DeadMessage]:
        with self._cond:
            state = self._topics.get(topic)
            if state is None:
                return []
            found = []
            for message_id in itertools.islice(state.dead, limit):
                record = state.records[message_id]
                found.append(
                    DeadMessage(
                        message_id,
                        topic,
                        record.body,
                        record.attempts,
                        to_datetime(record.enqueued_at),
                        record.reason,
                        to_datetime(record.died_at),
                    )
                )
            return found

    def _take_dead(
        self,
        topic: str,
        ids: list[str] | None,
        then: Callable[[_Topic, str], None],
        *,
        wake: bool = False,
    ) -> int:
        """Take dead letters (all of ``topic``'s, or those in ``ids``) off the dead list.

        ``then(topic, id)`` decides what becomes of each (requeued or forgotten), under
        the lock; ``wake`` wakes blocked pops when any was taken. Returns how many.
        """
        with self._cond:
            state = self._topics.get(topic)
            if state is None:
                return 0
            chosen = list(state.dead) if ids is None else [i for i in ids if i in state.dead]
            for message_id in chosen:
                del state.dead[message_id]
                then(state, message_id)
            if chosen and wake:
                self._cond.notify_all()
            return len(chosen)

    def _requeue_dead(self, topic: str, ids: list[str] | None) -> int:
        now = self.clock()

        def requeue(state: _Topic, message_id: str) -> None:
            record = state.records[message_id]
            record.attempts = 0
            record.reason = ""
            heapq.heappush(state.waiting, (now, int(message_id, 16), message_id))

        return self._take_dead(topic, ids, requeue, wake=True)

    def _purge_dead(self, topic: str, ids: list[str] | None) -> int:
        def forget(state: _Topic, message_id: str) -> None:
            del state.records[message_id]

        return self._take_dead(topic, ids, forget)

    def _size(self, topic: str) -> int:
        now = self.clock()
        with self._cond:
            state = self._topics.get(topic)
            if state is None:
                return 0
            # Expired leases count as waiting without being reclaimed: only pop reclaims,
            # so until then the expired delivery may still acknowledge its message.
            expired = {
                message_id
                for deadline, _, message_id in state.leases
                if deadline <= now
                and getattr(state.records.get(message_id), "deadline", None) == deadline
            }
            return len(state.waiting) + len(expired)

    def _close(self) -> None:
        with self._cond:
            self._cond.notify_all()
            self._topics.clear()
