"""The outbox service: publish inside the business transaction, relay after it commits.

::

    from django.db import transaction
    from toolkit_batteries import services

    with transaction.atomic():
        order = Order.objects.create(...)
        services.outbox().publish("orders.created", {"id": order.pk}, key=str(order.pk))
    # rolled back: neither the order nor the message exists; committed: both do.

``publish`` writes a row through the caller's database alias (the ``db`` adapter) or
defers an in-memory append to the commit (``memory``), so a message exists exactly when
the business rows do. A relay (``manage.py outbox_relay`` / ``toolkit outbox:relay``,
:class:`~toolkit_batteries.outbox.relay.Relay`) claims committed messages in batches,
publishes each to the ``publisher`` (the eventbus or queue battery, or a callable) as a
JSON envelope carrying the message id, and marks them sent. Delivery is **at least
once**: a relay that dies between publishing and marking publishes that batch again
after its lease (``lock_seconds``) expires. Consumers make it exactly-once in effect with
the inbox, in their own transaction::

    delivered = decode(message.body)                 # the envelope: id, topic, payload
    with transaction.atomic():
        if services.outbox().inbox("billing").seen(delivered.id):
            return                                   # a redelivery: already applied
        apply(delivered.json())

A publish that keeps failing is retried with the ``retry`` policy's backoff until
``max_attempts`` attempts, then moved to the dead list (status ``dead``), which
``outbox_relay dlq list`` shows and ``dlq requeue`` sends back.

Times come from ``outbox.clock`` (``time.time`` unless replaced), so tests move time.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError, ToolkitError
from toolkit_batteries.core.options import Duration

if TYPE_CHECKING:
    from .relay import Relay

__all__ = [
    "MAX_TOPIC_LENGTH",
    "STALL_AFTER",
    "Delivered",
    "Inbox",
    "NewMessage",
    "Outbox",
    "OutboxClosedError",
    "OutboxError",
    "Record",
    "Settings",
    "Status",
    "decode",
    "encode_payload",
]

#: Longest topic or key; both become column values and transport names.
MAX_TOPIC_LENGTH = 200
#: Longest ``last_error`` kept on a row.
MAX_ERROR_LENGTH = 2000
#: Oldest pending message, in seconds, before :meth:`Outbox.status` reports a stall.
STALL_AFTER = 300.0
#: Largest ``limit`` of :meth:`Outbox.dead_messages`.
MAX_DEAD_LIMIT = 1000
#: The ``locked_until`` of an abandoned row given back untried: long expired (claimable),
#: yet not 0, so the next claim still sees that a relay stopped while holding it.
ABANDONED = 1.0

_TOPIC = re.compile(r"^[^\s\x00]+$")


class OutboxError(ToolkitError):
    """An outbox operation failed for a reason other than an unreachable database."""

    code = "outbox_error"


class OutboxClosedError(OutboxError, RuntimeError):
    """The outbox was used after :meth:`Outbox.close`."""

    code = "outbox_closed"
    params = ("instance",)
    template = "outbox.{instance}: the outbox is closed"


def encode_payload(payload: Any) -> bytes:
    """Return the stored bytes of ``payload``: bytes as they are, a dict or list as JSON."""
    if isinstance(payload, bytes):
        return payload
    if isinstance(payload, bytearray | memoryview):
        return bytes(payload)
    if isinstance(payload, Mapping | list):
        return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    raise TypeError("outbox payload must be bytes, a dict or a list")


def check_topic(value: Any, name: str = "topic") -> str:
    """Return ``value`` if it is 1 to 200 characters without whitespace; else raise."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string")
    if not value or len(value) > MAX_TOPIC_LENGTH or not _TOPIC.match(value):
        raise ValueError(
            f"{name} must be 1 to {MAX_TOPIC_LENGTH} characters without whitespace or NUL"
        )
    return value


def _check_headers(headers: Any) -> dict[str, str]:
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise TypeError("headers must be a mapping of strings")
    out: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise TypeError("headers must be a mapping of strings")
        out[name] = value
    return out


def to_datetime(epoch: float | None) -> datetime | None:
    """Return the aware UTC datetime of an epoch timestamp (``None`` stays ``None``)."""
    return None if epoch is None else datetime.fromtimestamp(float(epoch), UTC)


def canonical_id(value: Any) -> str:
    """Return a message id as the canonical UUID text (SQLite stores 32 hex digits)."""
    return str(value if isinstance(value, uuid.UUID) else uuid.UUID(str(value)))


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message :meth:`Outbox.publish` hands its adapter to store as a pending row.

    One value rather than six arguments, so the adapters' ``_insert`` hooks cannot drift
    in what a new row is made of.
    """

    message_id: str
    topic: str
    key: str
    payload: bytes
    headers: dict[str, str]
    #: When it was published (``available_at`` starts there too).
    created_at: float


@dataclass(frozen=True, slots=True)
class Record:
    """One outbox row as the relay and the dead list see it."""

    #: The row's number (``dlq requeue --id`` takes it).
    row: int
    #: The message id consumers deduplicate on (a UUID, stable across redeliveries).
    message_id: str
    topic: str
    key: str
    payload: bytes
    headers: dict[str, str]
    #: Publish attempts so far, the current one included while claimed.
    attempts: int
    created_at: datetime
    status: str = "pending"
    last_error: str = ""
    #: Claimed before and never settled: the relay holding it died, was killed or hung
    #: past ``lock_seconds`` (the message may be what stops relays; see the relay).
    abandoned: bool = False

    def envelope(self) -> bytes:
        """Return what the relay publishes: JSON with the id, topic, key, headers, payload.

        The payload travels base64-encoded (``payload``), so any bytes survive;
        :func:`decode` turns the envelope back into a :class:`Delivered`.
        """
        return json.dumps(
            {
                "id": self.message_id,
                "topic": self.topic,
                "key": self.key,
                "headers": self.headers,
                "payload": base64.b64encode(self.payload).decode("ascii"),
                "created_at": self.created_at.timestamp(),
            },
            separators=(",", ":"),
        ).encode()

    def as_dict(self) -> dict[str, Any]:
        """Return the row for ``dlq list --json`` (the payload's size, never its content)."""
        return {
            "id": self.row,
            "message_id": self.message_id,
            "topic": self.topic,
            "key": self.key,
            "attempts": self.attempts,
            "status": self.status,
            "size": len(self.payload),
            "created_at": self.created_at.isoformat(),
            "last_error": self.last_error,
        }

    def __repr__(self) -> str:
        """Show the identity and size, never the payload (it may hold personal data)."""
        return (
            f"Record(row={self.row}, message_id={self.message_id!r}, topic={self.topic!r}, "
            f"attempts={self.attempts}, size={len(self.payload)})"
        )


@dataclass(frozen=True, slots=True)
class Delivered:
    """A relayed message as a consumer receives it (:func:`decode` of the envelope)."""

    id: str
    topic: str
    key: str
    headers: dict[str, str]
    payload: bytes
    created_at: datetime | None = None

    def json(self) -> Any:
        """Decode the payload as JSON (what ``publish(topic, {...})`` stored)."""
        return json.loads(self.payload)

    def __repr__(self) -> str:
        return f"Delivered(id={self.id!r}, topic={self.topic!r}, size={len(self.payload)})"


def decode(body: bytes | str | Any) -> Delivered:
    """Turn a relayed envelope (bytes, an ``Event`` or a queue ``Message``) into Delivered.

    Raise ``ValueError`` when it is not an outbox envelope.
    """
    raw = getattr(body, "body", None) or getattr(body, "data", None) or body
    try:
        data = json.loads(raw)
        created = data.get("created_at")
        return Delivered(
            id=str(data["id"]),
            topic=str(data["topic"]),
            key=str(data.get("key") or ""),
            headers=dict(data.get("headers") or {}),
            payload=base64.b64decode(data["payload"], validate=True),
            created_at=to_datetime(created) if created is not None else None,
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        raise ValueError("not an outbox envelope") from None


@dataclass(frozen=True, slots=True)
class Status:
    """What ``outbox_relay status`` prints: counts by state and whether the relay stalls."""

    pending: int
    processed: int
    failed: int
    last_error: str = ""
    #: Age in seconds of the oldest pending message (0 when none).
    oldest_pending: float = 0.0
    stalled: bool = False

    def as_dict(self) -> dict[str, Any]:
        """Return ``{pending, processed, failed, last_error?, stalled}``."""
        data: dict[str, Any] = {
            "pending": self.pending,
            "processed": self.processed,
            "failed": self.failed,
        }
        if self.last_error:
            data["last_error"] = self.last_error
        data["stalled"] = self.stalled
        data["oldest_pending_seconds"] = round(self.oldest_pending, 3)
        return data


@dataclass(frozen=True, slots=True)
class Settings:
    """Validated options shared by the adapters and the relay (seconds as floats)."""

    batch_size: int = 100
    lock_seconds: float = 30.0
    max_attempts: int = 5
    retention: float = 168 * 3600.0
    poll_interval: float = 1.0
    publisher: str = ""
    #: The ``retry`` block, or ``None`` for the default backoff (:data:`DEFAULT_RETRY`).
    retry: Any = None
    notify_channel: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def settings_from_options(options: Any, *, instance: str = "default") -> Settings:
    """Validate an ``OutboxOptions``; raise :class:`InvalidOptionsError` naming the field."""

    def invalid(name: str, reason: str) -> InvalidOptionsError:
        return InvalidOptionsError("outbox", name, reason, instance=instance)

    if int(options.batch_size) < 1:
        raise invalid("batch_size", "must be at least 1")
    if int(options.batch_size) > 10000:
        raise invalid("batch_size", "must be at most 10000")
    if int(options.lock_seconds) < 1:
        raise invalid("lock_seconds", "must be at least 1")
    if int(options.max_attempts) < 1:
        raise invalid("max_attempts", "must be at least 1")
    retention = Duration.seconds(options.retention)
    poll = Duration.seconds(options.poll_interval)
    if retention < 0:
        raise invalid("retention", "must not be negative")
    if poll <= 0:
        raise invalid("poll_interval", "must be a positive duration")
    channel = str(options.notify_channel or "")
    if channel and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", channel):
        raise invalid("notify_channel", "must be a SQL identifier (letters, digits, _)")
    return Settings(
        batch_size=int(options.batch_size),
        lock_seconds=float(options.lock_seconds),
        max_attempts=int(options.max_attempts),
        retention=retention,
        poll_interval=poll,
        publisher=str(options.publisher or ""),
        retry=options.retry,
        notify_channel=channel,
    )


class Inbox:
    """A consumer's record of processed message ids (``outbox.inbox("billing")``).

    :meth:`seen` inserts ``(consumer, message_id)`` and tells whether it was already
    there. Call it inside the transaction that applies the message's effects: if the
    effects roll back, so does the mark, and a concurrent duplicate waits on the first
    one's row lock, then sees it (PostgreSQL) or serialises behind SQLite's write lock.
    """

    def __init__(self, outbox: Outbox, consumer: str) -> None:
        self.outbox = outbox
        self.consumer = check_topic(consumer, "consumer")

    def seen(self, message_id: str | Delivered) -> bool:
        """Record ``message_id`` as processed; return ``True`` if it already was."""
        self.outbox._check_open()
        if isinstance(message_id, Delivered):
            message_id = message_id.id
        if not isinstance(message_id, str) or not message_id or len(message_id) > 200:
            raise ValueError("message_id must be a non-empty string of at most 200 characters")
        return self.outbox._seen(self.consumer, message_id, self.outbox.clock())

    def process(self, message: Any, handler: Callable[[Delivered], Any]) -> bool:
        """Decode ``message``, run ``handler`` once per message id; return whether it ran.

        The mark and the handler's database writes share one ``transaction.atomic`` on
        the outbox's database, so a handler that raises leaves the message unprocessed.
        """
        delivered = message if isinstance(message, Delivered) else decode(message)
        with self.outbox._atomic():
            if self.seen(delivered.id):
                return False
            handler(delivered)
            return True

    def __repr__(self) -> str:
        return f"<Inbox outbox.{self.outbox.instance} consumer={self.consumer!r}>"


class Outbox(Service):
    """A transactional outbox (spec: ``outbox``); adapters implement the primitives."""

    service_name: ClassVar[str] = "outbox"

    def __init__(
        self,
        settings: Settings,
        *,
        instance: str = "default",
        container: Any = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.settings = settings
        self.instance = instance
        #: Epoch seconds now; replace it (``outbox.clock = fake``) to move time in tests.
        self.clock: Callable[[], float] = clock or time.time
        self._container = container
        self._closed = False
        self._relays: list[Relay] = []
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ producer

    def publish(
        self,
        topic: str,
        payload: bytes | Mapping[str, Any] | list[Any],
        key: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> str:
        """Record a message for ``topic``; return its id. It joins the caller's transaction.

        ``payload`` is bytes or a JSON-able dict/list; ``key`` (optional) groups related
        messages; ``headers`` are string pairs carried in the envelope.
        """
        self._check_open()
        check_topic(topic)
        if key is not None and key != "":
            check_topic(key, "key")
        body = encode_payload(payload)
        message_id = str(uuid.uuid4())
        headers = _check_headers(headers)
        self._insert(NewMessage(message_id, topic, key or "", body, headers, self.clock()))
        return message_id

    # ------------------------------------------------------------------ consumer

    def inbox(self, consumer: str) -> Inbox:
        """Return the deduplicating inbox of ``consumer`` (a name, like a queue group)."""
        self._check_open()
        return Inbox(self, consumer)

    # ------------------------------------------------------------------ relay

    def relay(self, publish: Callable[[Record], Any] | None = None, **kwargs: Any) -> Relay:
        """Return a :class:`~toolkit_batteries.outbox.relay.Relay` over this outbox.

        ``publish`` receives each claimed :class:`Record`; without it the ``publisher``
        option picks the eventbus or the queue battery (an error names the option when
        it is unset).
        """
        from .relay import Relay, publisher_for

        self._check_open()
        return Relay(self, publish or publisher_for(self), **kwargs)

    # ------------------------------------------------------------------ operations

    def status(self) -> Status:
        """Return the counts by state, the last error and whether the relay stalls."""
        self._check_open()
        return self._status(self.clock())

    def dead_messages(self, limit: int = 100) -> list[Record]:
        """Return up to ``limit`` (1 to 1000) dead messages, oldest first."""
        self._check_open()
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError("limit must be an integer")
        if not 1 <= limit <= MAX_DEAD_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_DEAD_LIMIT}")
        return self._dead(limit)

    def requeue_dead(self, rows: Iterable[int] | None = None) -> int:
        """Send dead messages (all, or the given row numbers) back to pending; return count.

        A requeued message starts over (``attempts`` 0) and keeps its message id.
        """
        self._check_open()
        wanted = None if rows is None else _check_rows(rows)
        if wanted == []:
            return 0
        return self._requeue(wanted, self.clock())

    def purge_dead(self, rows: Iterable[int]) -> int:
        """Delete the given dead messages for good; return how many."""
        self._check_open()
        wanted = _check_rows(rows)
        return self._purge_dead(wanted) if wanted else 0

    def purge(self, before: float | timedelta | None = None) -> int:
        """Delete sent messages (and inbox marks) older than ``before`` (default retention).

        Return how many outbox rows went. Pending and dead messages are never purged.
        """
        self._check_open()
        age = self.settings.retention if before is None else Duration.seconds(before)
        if age < 0:
            raise ValueError("before must not be negative")
        return self._purge_sent(self.clock() - age)

    # ------------------------------------------------------------------ lifecycle

    @property
    def closed(self) -> bool:
        """Tell whether :meth:`close` has run."""
        return self._closed

    def _add_relay(self, relay: Relay) -> None:
        with self._lock:
            self._relays.append(relay)

    def _remove_relay(self, relay: Relay) -> None:
        with self._lock:
            if relay in self._relays:
                self._relays.remove(relay)

    def close(self) -> None:
        """Stop this outbox's relays (their batch in flight finishes), then refuse use."""
        with self._lock:
            relays = list(self._relays)
        for relay in relays:
            relay.stop()
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise OutboxClosedError(self.instance)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<{type(self).__name__} outbox.{self.instance} {state}>"

    # ------------------------------------------------------------------ adapter hooks

    def _atomic(self) -> Any:
        """Return the transaction block :meth:`Inbox.process` runs in."""
        from contextlib import nullcontext

        return nullcontext()

    def _insert(self, message: NewMessage) -> int | None:
        """Store ``message`` as a pending row in the caller's transaction; return its row."""
        raise NotImplementedError

    def _claim(self, owner: str, limit: int, now: float, lease: float) -> list[Record]:
        raise NotImplementedError

    def _begin_batch(
        self, owner: str, limit: int, now: float, lease: float
    ) -> tuple[list[Record], Any]:
        """Return the next batch and a token for :meth:`_end_batch` (the cdc position)."""
        return self._claim(owner, limit, now, lease), None

    def _end_batch(self, token: Any) -> None:
        """Confirm a batch whose messages are all settled (cdc: advance the slot)."""

    def _mark_sent(self, rows: list[int], now: float) -> int:
        raise NotImplementedError

    def _release(self, rows: list[int], owner: str, *, abandoned: bool) -> int:
        """Give claimed, untried rows back as they were (attempt undone, lease dropped).

        ``abandoned`` rows stay marked as such (an expired lease), so the next claim
        still treats them one at a time.
        """
        raise NotImplementedError

    def _mark_failed(
        self, row: int, owner: str, error: str, retry_at: float, dead: bool, now: float
    ) -> bool:
        raise NotImplementedError

    def _status(self, now: float) -> Status:
        raise NotImplementedError

    def _dead(self, limit: int) -> list[Record]:
        raise NotImplementedError

    def _requeue(self, rows: list[int] | None, now: float) -> int:
        raise NotImplementedError

    def _purge_dead(self, rows: list[int]) -> int:
        raise NotImplementedError

    def _purge_sent(self, cutoff: float) -> int:
        raise NotImplementedError

    def _seen(self, consumer: str, message_id: str, now: float) -> bool:
        raise NotImplementedError


def _check_rows(rows: Iterable[int]) -> list[int]:
    if isinstance(rows, str | bytes):
        raise TypeError("rows must be a list of row numbers")
    out = list(rows)
    for row in out:
        if isinstance(row, bool) or not isinstance(row, int) or not 0 < row < 2**63:
            raise ValueError("rows must be positive integers (the dead list's id column)")
    return out
