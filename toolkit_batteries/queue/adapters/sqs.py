"""The ``sqs`` adapter: one Amazon SQS queue (or an SQS-compatible service) per topic.

Each topic is a standard SQS queue named ``<prefix><topic>`` (characters SQS refuses
become ``_`` and a hash keeps names distinct and under 80 characters); its dead list is a
second queue, ``...-dead``. Queues are created on first use. The delivery model is the
battery's (see :mod:`toolkit_batteries.queue.base`), mapped onto SQS like this:

* ``push`` sends the body base64-encoded (SQS bodies are text) with the toolkit's id,
  the enqueue time and the earlier attempts as message attributes; ``delay`` is SQS's
  ``DelaySeconds`` (whole seconds, at most 900: SQS's limit).
* ``pop`` receives one message with ``VisibilityTimeout`` = the lease (whole seconds)
  and waits with long polls of one second, so :meth:`close` wakes it within a second.
  ``attempts`` is SQS's receive count plus the attempts before a ``nack``.
* ``ack`` deletes the message. The lease is checked on the queue's clock first: SQS
  would accept a stale receipt handle, the battery's contract refuses it (``False``).
* ``nack`` sends the message again (same id, delayed by ``delay``) and deletes the
  delivery; ``dead`` moves it to the dead queue with its reason.
* ``dead_messages``/``requeue_dead``/``purge_dead`` read the dead queue by receiving
  everything in it (hidden while read, made visible again after): fine for a dead list,
  which stays small. ``size`` is SQS's approximate visible plus delayed counts.

Limits that differ from the other adapters: a body of at most :data:`MAX_BODY` bytes
(SQS's 256 KiB after base64), delays of at most 15 minutes, and ``push_many`` sends
batches of 10 that are each all-or-nothing but not together. Credentials come from the
options or, when empty, boto3's usual chain (environment, instance role).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import math
import re
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError, MissingExtraError
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.core.transport import aws_unreachable

from ..base import DeadMessage, Message, Queue, QueueClosedError, QueueError, to_datetime

with MissingExtraError.guard("queue", "sqs", "sqs", "boto3"):
    import boto3
    from botocore.config import Config as BotoConfig
    from botocore.exceptions import ClientError

__all__ = ["MAX_BODY", "MAX_DELAY", "SQSQueue", "queue_name"]

#: Largest body in bytes: 256 KiB of SQS message, less 1 KiB for the attributes, as base64.
MAX_BODY = (256 * 1024 - 1024) // 4 * 3
#: Longest ``delay`` in seconds SQS accepts (``DelaySeconds``).
MAX_DELAY = 900
#: Longest visibility timeout in seconds SQS accepts.
MAX_VISIBILITY = 43200
#: Seconds dead messages stay hidden while one call reads the dead queue.
_SCAN_HIDE = 60
_SAFE = re.compile(r"[^A-Za-z0-9_-]")
_PREFIX = re.compile(r"^[A-Za-z0-9_-]{0,40}$")
_ATTRIBUTES = ["All"]
_SESSION: Any = None
_SESSION_LOCK = threading.Lock()


def queue_name(prefix: str, topic: str, *, dead: bool = False) -> str:
    """Return the SQS queue name of ``topic``: at most 80 characters SQS accepts."""
    safe = _SAFE.sub("_", topic)
    name = prefix + safe
    if safe != topic or len(name) > 75:
        digest = hashlib.sha256(topic.encode()).hexdigest()[:12]
        name = f"{prefix}{safe[: 75 - len(prefix) - 13]}-{digest}"
    return name + ("-dead" if dead else "")


@dataclass(slots=True)
class _Lease:
    attempts: int
    receipt: str
    deadline: float


def _text(value: str) -> dict[str, str]:
    return {"DataType": "String", "StringValue": value}


@traced("_push", "_push_many", "_pop", "_ack", "_nack", "_dead", "_size")
class SQSQueue(Queue):
    """Topics as SQS queues, with the battery's leases checked on the queue's clock."""

    adapter_name = "sqs"
    #: Largest body this adapter carries (the others have no limit of their own).
    max_body = MAX_BODY

    def __init__(self, client: Any, options: Any, *, instance: str = "default") -> None:
        super().__init__(options, instance=instance)
        self.client = client
        self.prefix = str(getattr(options, "prefix", "") or "")
        if not _PREFIX.match(self.prefix):
            raise InvalidOptionsError(
                "queue",
                "prefix",
                "must be at most 40 letters, digits, '-' or '_' on the sqs adapter "
                "(it starts every SQS queue name)",
                instance=instance,
            )
        self._unreachable = aws_unreachable("queue", instance, "the SQS endpoint")
        self._urls: dict[tuple[str, bool], str] = {}
        self._leases: dict[tuple[str, str], _Lease] = {}
        self._lock = threading.Lock()

    @classmethod
    def open(cls, ctx: OpenContext) -> SQSQueue:
        """Build the SQS client from the options and check the endpoint answers."""
        options = ctx.options
        with _SESSION_LOCK:  # one session (not thread-safe): its loaded model serves all
            global _SESSION
            if _SESSION is None:
                _SESSION = boto3.session.Session()
            client = _SESSION.client(
                "sqs",
                region_name=options.region or "us-east-1",
                endpoint_url=options.endpoint or None,
                aws_access_key_id=options.access_key_id or None,
                aws_secret_access_key=options.secret_access_key or None,
                # Long polls last one second; bounded timeouts fail a dead endpoint fast.
                config=BotoConfig(connect_timeout=5, read_timeout=10, retries={"max_attempts": 2}),
            )
        queue = cls(client, options, instance=ctx.instance)
        # Reachability only: a refusal (no sqs:ListQueues permission) is an answer too.
        with contextlib.suppress(QueueError):
            queue._call(client.list_queues, QueueNamePrefix=queue.prefix or "q")
        return queue

    # ------------------------------------------------------------------ plumbing

    def _call(self, function: Any, **kwargs: Any) -> Any:
        """Run one API call: a lost endpoint is ServiceUnavailableError, a refusal QueueError."""
        try:
            with self._unreachable:
                return function(**kwargs)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "error")
            raise QueueError(f"queue.{self.instance}: SQS refused the call ({code})") from None

    def _url(self, topic: str, *, dead: bool = False) -> str:
        url = self._urls.get((topic, dead))
        if url is None:
            name = queue_name(self.prefix, topic, dead=dead)
            url = self._call(self.client.create_queue, QueueName=name)["QueueUrl"]
            if len(self._urls) < 10000:
                self._urls[(topic, dead)] = url
        return url

    def _entry(
        self, body: bytes, message_id: str, enqueued: float, attempts: int, delay: float
    ) -> dict[str, Any]:
        if len(body) > MAX_BODY:
            raise QueueError(
                f"queue.{self.instance}: a body of {len(body)} bytes is over the sqs "
                f"adapter's limit of {MAX_BODY} bytes"
            )
        if delay > MAX_DELAY:
            raise ValueError(f"delay must be at most {MAX_DELAY} seconds on the sqs adapter")
        return {
            "MessageBody": "b" + base64.b64encode(body).decode(),  # never empty
            "DelaySeconds": math.ceil(delay),
            "MessageAttributes": {
                "tid": _text(message_id),
                "enq": _text(repr(enqueued)),
                "att": _text(str(attempts)),
            },
        }

    def _send(self, topic: str, entry: dict[str, Any], *, dead: bool = False) -> None:
        self._call(self.client.send_message, QueueUrl=self._url(topic, dead=dead), **entry)

    def _settle(self, message: Message) -> _Lease | None:
        """Take this delivery's lease if it is still ours on the queue's clock."""
        with self._lock:
            lease = self._leases.get((message.topic, message.id))
            if lease is None or lease.attempts != message.attempts:
                return None
            del self._leases[(message.topic, message.id)]
        return lease if self.clock() < lease.deadline else None

    # ------------------------------------------------------------------ operations

    def _push(self, topic: str, body: bytes, delay: float) -> str:
        message_id = uuid.uuid4().hex
        self._send(topic, self._entry(body, message_id, self.clock(), 0, delay))
        return message_id

    def _push_many(self, topic: str, bodies: list[bytes], delay: float) -> list[str]:
        now = self.clock()
        ids = [uuid.uuid4().hex for _ in bodies]
        entries = [self._entry(b, i, now, 0, delay) for b, i in zip(bodies, ids, strict=True)]
        url = self._url(topic)
        for start in range(0, len(entries), 10):
            batch = [{"Id": str(n), **e} for n, e in enumerate(entries[start : start + 10])]
            result = self._call(self.client.send_message_batch, QueueUrl=url, Entries=batch)
            if result.get("Failed"):
                codes = sorted({f.get("Code", "error") for f in result["Failed"]})
                raise QueueError(
                    f"queue.{self.instance}: SQS refused {len(result['Failed'])} of a batch "
                    f"({', '.join(codes)}); {start} messages before it were sent"
                )
        return ids

    def _pop(self, topic: str, wait: float, lease: float) -> Message | None:
        url = self._url(topic)
        deadline = time.monotonic() + wait
        visibility = min(MAX_VISIBILITY, max(1, math.ceil(lease)))
        while True:
            if self._closed:
                raise QueueClosedError(self.instance)
            remaining = deadline - time.monotonic()
            try:
                got = self._call(
                    self.client.receive_message,
                    QueueUrl=url,
                    MaxNumberOfMessages=1,
                    VisibilityTimeout=visibility,
                    WaitTimeSeconds=1 if remaining >= 1 else 0,
                    MessageAttributeNames=_ATTRIBUTES,
                    MessageSystemAttributeNames=["ApproximateReceiveCount"],
                )
            except Exception:
                if self._closed:  # close() dropped the connection under this long poll
                    raise QueueClosedError(self.instance) from None
                raise
            if got.get("Messages"):
                return self._delivered(topic, got["Messages"][0], lease)
            if remaining <= 0:
                return None
            if remaining < 1:
                time.sleep(min(0.05, remaining))

    def _delivered(self, topic: str, raw: dict[str, Any], lease: float) -> Message:
        attrs = raw.get("MessageAttributes", {})
        received = int(raw.get("Attributes", {}).get("ApproximateReceiveCount", "1"))
        attempts = int(attrs["att"]["StringValue"]) + received
        message = Message(
            attrs["tid"]["StringValue"],
            topic,
            base64.b64decode(raw["Body"][1:]),
            attempts,
            to_datetime(float(attrs["enq"]["StringValue"])),
        )
        now = self.clock()
        with self._lock:
            if len(self._leases) >= 10000:  # forget deliveries whose lease ran out
                for key in [k for k, v in self._leases.items() if v.deadline <= now]:
                    del self._leases[key]
            self._leases[(topic, message.id)] = _Lease(attempts, raw["ReceiptHandle"], now + lease)
        return message

    def _delete(self, topic: str, receipt: str, *, dead: bool = False) -> None:
        url = self._url(topic, dead=dead)
        self._call(self.client.delete_message, QueueUrl=url, ReceiptHandle=receipt)

    def _ack(self, message: Message) -> bool:
        lease = self._settle(message)
        if lease is None:
            return False
        self._delete(message.topic, lease.receipt)
        return True

    def _resend(self, message: Message, attempts: int, delay: float) -> dict[str, Any]:
        enqueued = message.enqueued_at.timestamp()
        return self._entry(message.body, message.id, enqueued, attempts, delay)

    def _nack(self, message: Message, delay: float) -> bool:
        lease = self._settle(message)
        if lease is None:
            return False
        self._send(message.topic, self._resend(message, message.attempts, delay))
        self._delete(message.topic, lease.receipt)
        return True

    def _dead(self, message: Message, reason: str) -> bool:
        lease = self._settle(message)
        if lease is None:
            return False
        entry = self._resend(message, message.attempts, 0)
        entry["MessageAttributes"]["why"] = {
            "DataType": "Binary",
            "BinaryValue": reason.encode() or b" ",  # SQS refuses an empty value
        }
        entry["MessageAttributes"]["died"] = _text(repr(self.clock()))
        self._send(message.topic, entry, dead=True)
        self._delete(message.topic, lease.receipt)
        return True

    # ------------------------------------------------------------------ dead lists

    def _scan_dead(self, topic: str) -> tuple[str, list[tuple[DeadMessage, str]]]:
        """Receive every dead message of ``topic`` (hidden while read), oldest death first."""
        url = self._url(topic, dead=True)
        found: dict[str, tuple[DeadMessage, str]] = {}
        while True:
            got = self._call(
                self.client.receive_message,
                QueueUrl=url,
                MaxNumberOfMessages=10,
                VisibilityTimeout=_SCAN_HIDE,
                WaitTimeSeconds=0,
                MessageAttributeNames=_ATTRIBUTES,
            )
            if not got.get("Messages"):
                break
            for raw in got["Messages"]:
                attrs = raw["MessageAttributes"]
                why = attrs["why"]["BinaryValue"]
                dead = DeadMessage(
                    attrs["tid"]["StringValue"],
                    topic,
                    base64.b64decode(raw["Body"][1:]),
                    int(attrs["att"]["StringValue"]),
                    to_datetime(float(attrs["enq"]["StringValue"])),
                    "" if why == b" " else why.decode(),
                    to_datetime(float(attrs["died"]["StringValue"])),
                )
                found.setdefault(dead.id, (dead, raw["ReceiptHandle"]))
        return url, sorted(found.values(), key=lambda pair: pair[0].died_at)

    def _release(self, url: str, receipts: list[str]) -> None:
        """Make messages hidden by a scan visible again."""
        for start in range(0, len(receipts), 10):
            entries = [
                {"Id": str(n), "ReceiptHandle": r, "VisibilityTimeout": 0}
                for n, r in enumerate(receipts[start : start + 10])
            ]
            self._call(self.client.change_message_visibility_batch, QueueUrl=url, Entries=entries)

    def _dead_messages(self, topic: str, limit: int) -> list[DeadMessage]:
        url, found = self._scan_dead(topic)
        self._release(url, [receipt for _, receipt in found])
        return [dead for dead, _ in found[:limit]]

    def _take_dead(self, topic: str, ids: list[str] | None, requeue: bool) -> int:
        url, found = self._scan_dead(topic)
        wanted = None if ids is None else set(ids)
        taken: set[str] = set()
        try:
            for dead, receipt in found:
                if wanted is not None and dead.id not in wanted:
                    continue
                if requeue:  # a requeued message starts over: attempts from 0
                    self._send(topic, self._resend(dead, 0, 0))
                self._call(self.client.delete_message, QueueUrl=url, ReceiptHandle=receipt)
                taken.add(receipt)
        finally:  # what was not taken (a failure included) becomes visible again
            self._release(url, [receipt for _, receipt in found if receipt not in taken])
        return len(taken)

    def _requeue_dead(self, topic: str, ids: list[str] | None) -> int:
        return self._take_dead(topic, ids, requeue=True)

    def _purge_dead(self, topic: str, ids: list[str] | None) -> int:
        return self._take_dead(topic, ids, requeue=False)

    def _size(self, topic: str) -> int:
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesDelayed"]
        got = self._call(
            self.client.get_queue_attributes, QueueUrl=self._url(topic), AttributeNames=names
        )
        return sum(int(got["Attributes"].get(name, 0)) for name in names)

    def _close(self) -> None:
        """Close the client's connections; a blocked pop sees the close within a second."""
        self.client.close()
