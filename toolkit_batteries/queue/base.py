"""The queue service: topics of byte messages, delivered at least once.

Every adapter subclasses :class:`Queue` and implements the underscored operations
(``_push``, ``_pop``, ...). The base class does what must not differ between adapters:
it validates topics, bodies, delays and limits, turns durations into seconds, refuses
use after :meth:`Queue.close`, and closes its dependants (job dispatchers and workers)
before the queue itself, so a worker finishes and acknowledges its current job while
the queue can still take the acknowledgement::

    queue = services.queue()
    queue.push("emails", b'{"to": "ada@example.com"}')
    message = queue.pop("emails")          # waits up to poll_timeout (5 s)
    if message is not None:
        send(message.body)
        queue.ack(message)                 # else it reappears after visibility_timeout

Delivery model (the same on every adapter):

* A message is *ready* from its push (or after ``delay``). :meth:`Queue.pop` hands out
  the ready message that became visible first (ties: push order), makes it invisible for
  ``visibility_timeout`` and counts the delivery in ``attempts``.
* :meth:`Queue.ack` deletes it; :meth:`Queue.nack` makes it ready again (after
  ``delay``); :meth:`Queue.dead` moves it to the topic's dead list, where
  :meth:`Queue.dead_messages` lists it and :meth:`Queue.requeue_dead` sends it back.
* A popped message neither acknowledged nor nacked reappears when its visibility
  timeout expires, with ``attempts`` one higher. The delivery it was popped in has then
  lost its lease: ``ack``, ``nack`` and ``dead`` with the old :class:`Message` return
  ``False`` once another consumer has popped the message again.

Times come from ``queue.clock`` (``time.time`` unless replaced), so tests can move time
forward instead of sleeping; waiting in ``pop`` always uses the real monotonic clock.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service

from .errors import QueueClosedError, QueueError, QueueFullError

__all__ = [
    "MAX_DEAD_LIMIT",
    "MAX_REASON_LENGTH",
    "DeadMessage",
    "Message",
    "Queue",
    "QueueClosedError",
    "QueueError",
    "QueueFullError",
    "seconds",
]

#: Longest ``reason`` kept by :meth:`Queue.dead`; longer reasons are cut.
MAX_REASON_LENGTH = 2000
#: Largest ``limit`` :meth:`Queue.dead_messages` accepts.
MAX_DEAD_LIMIT = 1000
#: Longest topic name; topics become key and column values.
MAX_TOPIC_LENGTH = 200

_TOPIC = re.compile(r"^[^\s\x00]+$")


@dataclass(frozen=True, slots=True)
class Message:
    """One delivery of a message: what :meth:`Queue.pop` returns.

    ``attempts`` counts deliveries including this one (1 on the first pop); it also
    identifies the delivery, so an acknowledgement from an expired delivery is refused.
    """

    id: str
    topic: str
    body: bytes
    attempts: int
    enqueued_at: datetime

    def __repr__(self) -> str:
        """Show the identity and size, never the body (it may hold personal data)."""
        return (
            f"Message(id={self.id!r}, topic={self.topic!r}, attempts={self.attempts}, "
            f"size={len(self.body)})"
        )


@dataclass(frozen=True, slots=True, repr=False)
class DeadMessage(Message):
    """A message on a dead list, with why and when it was moved there."""

    reason: str
    died_at: datetime


def seconds(value: float | int | timedelta | None, name: str, *, default: float = 0.0) -> float:
    """Return ``value`` (seconds or a ``timedelta``) as float seconds; refuse negatives.

    ``None`` gives ``default``. Raise ``ValueError`` naming ``name`` (never the value) for a
    negative number or an unsupported type.
    """
    if value is None:
        return default
    if isinstance(value, timedelta):
        result = value.total_seconds()
    elif isinstance(value, int | float) and not isinstance(value, bool):
        result = float(value)
    else:
        raise TypeError(f"{name} must be a number of seconds or a timedelta")
    if result != result or result < 0:  # NaN or negative
        raise ValueError(f"{name} must not be negative")
    return result


def to_datetime(epoch: float) -> datetime:
    """Return the aware UTC datetime of an epoch timestamp."""
    return datetime.fromtimestamp(float(epoch), UTC)


def _check_topic(topic: Any) -> str:
    if not isinstance(topic, str):
        raise TypeError("topic must be a string")
    if not topic or len(topic) > MAX_TOPIC_LENGTH or not _TOPIC.match(topic):
        raise ValueError(
            f"topic must be 1 to {MAX_TOPIC_LENGTH} characters without whitespace or NUL"
        )
    return topic


def _check_body(body: Any) -> bytes:
    if isinstance(body, bytes):
        return body
    if isinstance(body, bytearray | memoryview):
        return bytes(body)
    raise TypeError("body must be bytes (encode text first, for example with .encode())")


def _check_message(message: Any) -> Message:
    if type(message) is not Message and not isinstance(message, Message):
        raise TypeError("expected a Message returned by pop()")
    return message


#: The adapter hooks that leave the process on a remote queue: what its ``@traced`` names.
REMOTE_OPERATIONS = (
    "_push",
    "_push_many",
    "_pop",
    "_ack",
    "_nack",
    "_dead",
    "_dead_messages",
    "_requeue_dead",
    "_purge_dead",
    "_size",
)


class Queue(Service):
    """A message queue with visibility timeouts (spec: ``queue``).

    Adapters implement :meth:`open` and the underscored operations; the public methods
    validate their arguments and delegate.
    """

    service_name: ClassVar[str] = "queue"
    #: Largest body in bytes the adapter carries; ``None``: no limit of its own.
    max_body: ClassVar[int | None] = None

    def __init__(
        self, options: Any, *, instance: str = "default", clock: Callable[[], float] | None = None
    ) -> None:
        self.options = options
        self.instance = instance
        #: Seconds a popped message stays invisible (``visibility_timeout``, 30 s).
        self.visibility_timeout = (
            seconds(getattr(options, "visibility_timeout", None), "visibility_timeout") or 30.0
        )
        #: Seconds :meth:`pop` waits by default (``poll_timeout``, 5 s).
        self.poll_timeout = seconds(getattr(options, "poll_timeout", None), "poll_timeout") or 5.0
        #: Epoch seconds now; replace it (``queue.clock = fake``) to move time in tests.
        self.clock: Callable[[], float] = clock or time.time
        self._closed = False
        #: Topics already validated (a bounded cache: validation is on the hot path).
        self._topics_seen: set[str] = set()
        self._dependants: list[Any] = []
        self._dependants_lock = threading.Lock()

    # ------------------------------------------------------------------ public API

    def push(self, topic: str, body: bytes, *, delay: float | timedelta | None = None) -> str:
        """Append ``body`` to ``topic`` and return the new message's id.

        ``delay`` (seconds or a ``timedelta``) keeps the message invisible that long.
        """
        if self._closed:
            raise QueueClosedError(self.instance)
        if type(body) is not bytes:
            body = _check_body(body)
        return self._push(
            self._topic_ok(topic), body, 0.0 if delay is None else seconds(delay, "delay")
        )

    def push_many(
        self, topic: str, bodies: Iterable[bytes], *, delay: float | timedelta | None = None
    ) -> list[str]:
        """Append every body to ``topic`` at once; return the ids in the same order.

        All or nothing, and cheaper than one push each: one script call per 500 messages
        on ``kvserver``, one transaction (one commit) on ``db``.
        """
        if self._closed:
            raise QueueClosedError(self.instance)
        if isinstance(bodies, bytes | str):
            raise TypeError("bodies must be a list of bytes, not one body")
        checked = [body if type(body) is bytes else _check_body(body) for body in bodies]
        if not checked:
            return []
        pause = 0.0 if delay is None else seconds(delay, "delay")
        return self._push_many(self._topic_ok(topic), checked, pause)

    def pop(
        self,
        topic: str,
        *,
        timeout: float | timedelta | None = None,
        visibility_timeout: float | timedelta | None = None,
    ) -> Message | None:
        """Take the next ready message of ``topic``, waiting up to ``timeout`` for one.

        ``timeout`` defaults to ``poll_timeout``; 0 does not wait. Return ``None`` when no
        message became ready in time. The message stays invisible to other consumers for
        ``visibility_timeout`` (default: the option) unless acknowledged or nacked first.
        """
        if self._closed:
            raise QueueClosedError(self.instance)
        wait = seconds(timeout, "timeout", default=self.poll_timeout)
        lease = self.visibility_timeout
        if visibility_timeout is not None:
            lease = seconds(visibility_timeout, "visibility_timeout") or lease
        return self._pop(self._topic_ok(topic), wait, lease)

    def ack(self, message: Message) -> bool:
        """Delete a delivered message; return ``False`` if this delivery lost its lease."""
        if self._closed:
            raise QueueClosedError(self.instance)
        return self._ack(_check_message(message))

    def nack(self, message: Message, delay: float | timedelta | None = None) -> bool:
        """Return a delivered message to the ready messages, visible again after ``delay``.

        Return ``False`` if this delivery lost its lease (the message was popped again).
        """
        self._check_open()
        return self._nack(_check_message(message), seconds(delay, "delay"))

    def dead(self, message: Message, reason: str) -> bool:
        """Move a delivered message to its topic's dead list, recording ``reason``.

        Return ``False`` if this delivery lost its lease.
        """
        self._check_open()
        if not isinstance(reason, str):
            raise TypeError("reason must be a string")
        return self._dead(_check_message(message), reason[:MAX_REASON_LENGTH])

    def dead_messages(self, topic: str, limit: int = 100) -> list[DeadMessage]:
        """Return up to ``limit`` (1 to 1000) dead messages of ``topic``, oldest death first."""
        self._check_open()
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError("limit must be an integer")
        if not 1 <= limit <= MAX_DEAD_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_DEAD_LIMIT}")
        return self._dead_messages(self._topic_ok(topic), limit)

    def requeue_dead(self, topic: str, ids: Iterable[str] | None = None) -> int:
        """Send dead messages (all, or those in ``ids``) back to ready; return how many.

        A requeued message starts over: its ``attempts`` count is reset to 0.
        """
        self._check_open()
        wanted = None if ids is None else _check_ids(ids)
        if wanted == []:
            return 0
        return self._requeue_dead(self._topic_ok(topic), wanted)

    def purge_dead(self, topic: str, ids: Iterable[str] | None = None) -> int:
        """Delete dead messages (all, or those in ``ids``) for good; return how many."""
        self._check_open()
        wanted = None if ids is None else _check_ids(ids)
        if wanted == []:
            return 0
        return self._purge_dead(self._topic_ok(topic), wanted)

    def size(self, topic: str) -> int:
        """Return how many messages of ``topic`` wait for delivery (ready or delayed).

        Messages in flight (popped, lease not expired) and dead messages are not counted.
        """
        self._check_open()
        return self._size(self._topic_ok(topic))

    # ------------------------------------------------------------------ lifecycle

    @property
    def closed(self) -> bool:
        """Tell whether :meth:`close` has run."""
        return self._closed

    def add_dependant(self, dependant: Any) -> None:
        """Register an object (a dispatcher, a worker) to close before this queue.

        Its ``close()`` runs first, last registered first, when the queue closes: the
        spec's close order puts the job dispatcher before the queue.
        """
        with self._dependants_lock:
            if dependant not in self._dependants:
                self._dependants.append(dependant)

    def remove_dependant(self, dependant: Any) -> None:
        """Forget a dependant registered with :meth:`add_dependant` (idempotent)."""
        with self._dependants_lock:
            if dependant in self._dependants:
                self._dependants.remove(dependant)

    def close(self) -> None:
        """Close the dependants, then refuse further use; calling again does nothing.

        The adapter's own resources (a shared SQL pool or key-value client) belong to the
        container's registry and stay open for their other borrowers.
        """
        with self._dependants_lock:
            dependants = list(reversed(self._dependants))
            self._dependants.clear()
        errors: list[Exception] = []
        for dependant in dependants:
            try:
                dependant.close()
            except Exception as exc:  # every dependant gets its close; report them all
                errors.append(exc)
        if not self._closed:
            self._closed = True
            self._close()
        if errors:
            raise ExceptionGroup(f"queue.{self.instance}: closing dependants failed", errors)

    def _check_open(self) -> None:
        if self._closed:
            raise QueueClosedError(self.instance)

    def _topic_ok(self, topic: Any) -> str:
        """Return ``topic`` once validated; remember up to 10000 valid topics."""
        if type(topic) is str and topic in self._topics_seen:
            return topic
        _check_topic(topic)
        if len(self._topics_seen) < 10000:
            self._topics_seen.add(topic)
        return topic

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<{type(self).__name__} queue.{self.instance} {state}>"

    # ------------------------------------------------------------------ adapter hooks

    def _push(self, topic: str, body: bytes, delay: float) -> str:
        raise NotImplementedError

    def _push_many(self, topic: str, bodies: list[bytes], delay: float) -> list[str]:
        return [self._push(topic, body, delay) for body in bodies]

    def _pop(self, topic: str, wait: float, lease: float) -> Message | None:
        raise NotImplementedError

    def _ack(self, message: Message) -> bool:
        raise NotImplementedError

    def _nack(self, message: Message, delay: float) -> bool:
        raise NotImplementedError

    def _dead(self, message: Message, reason: str) -> bool:
        raise NotImplementedError

    def _dead_messages(self, topic: str, limit: int) -> list[DeadMessage]:
        raise NotImplementedError

    def _requeue_dead(self, topic: str, ids: list[str] | None) -> int:
        raise NotImplementedError

    def _purge_dead(self, topic: str, ids: list[str] | None) -> int:
        raise NotImplementedError

    def _size(self, topic: str) -> int:
        raise NotImplementedError

    def _close(self) -> None:
        """Release adapter state and wake blocked pops; the default does nothing."""


def _check_ids(ids: Iterable[str]) -> list[str]:
    if isinstance(ids, str | bytes):
        raise TypeError("ids must be a list of message ids, not one string")
    result = list(ids)
    if not all(isinstance(item, str) for item in result):
        raise TypeError("ids must be strings (Message.id)")
    return result
