"""PostHog (adapter ``posthog``, canonical ``analytics_b``): the batch API, through its SDK.

Events go to its documented batch
endpoint, ``POST <endpoint>/batch/`` with ``{"api_key", "batch": [...], "sent_at"}``,
sent by the official SDK's own request function (``posthog.request.batch_post``: body,
JSON encoding, user agent, error parsing). The SDK's ``Client`` is not used: it sends
through a module-wide ``requests`` session that cannot be guarded without changing it
for every other user of the SDK in the process, whereas ``batch_post`` takes a session,
so this adapter passes its own guarded one (``core.outbound.requests_adapter``).

**Wire shapes** (the provider's capture API): capture is ``{"event", "distinct_id",
"properties": {..., "$groups": {type: key}, "$lib", "$lib_version"}, "timestamp",
"uuid"}``; identify is the event ``$identify`` with the traits under
``properties.$set``; group is ``$groupidentify`` with ``$group_type``, ``$group_key``
and ``$group_set``.

**Buffer.** Calls return once the event is in a bounded in-memory buffer
(``max_buffer`` events, 10,000 by default). When it is full the **oldest** event is
dropped and counted (``stats()["dropped"]``, a warning at the first drop and every
1,000th): recent events are worth more, and a caller is never blocked or failed by a
provider outage. A daemon thread sends batches of ``batch_size`` (100) when that many are
waiting, and whatever is waiting every ``flush_interval`` (5 s); ``flush()`` sends now and
``close()`` stops the thread and flushes what is left.

**Failures.** A batch the provider refuses with a 4xx (other than 408 and 429) is dropped
and counted as ``failed``: sending it again would fail again. A 5xx, 408, 429 or a
network error puts the batch back at the front of the buffer (within its bound) for the
next flush. ``flush()`` raises :class:`AnalyticsDeliveryError` either way; the thread and
``close()`` log a warning instead. Messages carry the HTTP status or the error's class
only, never the key, the endpoint or the provider's text.

**Outbound rules.** ``endpoint`` (default ``https://us.i.posthog.com``) is https only
unless ``allow_insecure`` and public only unless ``allow_private``, checked at open and
again on every resolved address at connection time. The ``api_key`` is never logged,
repr'd or put in an error.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Any, Self

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.core.outbound import OutboundBlockedError, provider
from toolkit_batteries.core.tracing import traced

from ..base import Analytics, AnalyticsDeliveryError, Event
from ..options import AnalyticsOptions

try:
    import posthog.request as posthog_request
    import posthog.version
    import requests
except ImportError:  # pragma: no cover - the analytics extra is part of dev installs
    raise MissingExtraError("analytics", "analytics_b", "analytics", "posthog") from None

__all__ = [
    "BATCH_SIZE",
    "DEFAULT_ENDPOINT",
    "FLUSH_INTERVAL",
    "MAX_BUFFER",
    "TIMEOUT",
    "PostHogAnalytics",
    "wire_message",
]

logger = logging.getLogger("toolkit.analytics")

#: The provider's US ingestion host (``endpoint`` unset).
DEFAULT_ENDPOINT = posthog_request.US_INGESTION_ENDPOINT
#: Events per request, buffer bound, seconds between timed flushes, request timeout.
BATCH_SIZE = 100
MAX_BUFFER = 10_000
FLUSH_INTERVAL = 5.0
TIMEOUT = 15.0
#: What a send can raise besides a bug: the SDK's error, the transport's, the guard's.
_FAILURES = (posthog_request.APIError, requests.RequestException, OSError, OutboundBlockedError)
_LIB = {"$lib": "posthog-python", "$lib_version": posthog.version.VERSION}


def wire_message(event: Event) -> dict[str, Any]:
    """Return ``event`` in the provider's batch-item shape."""
    if event.kind == "identify":
        properties: dict[str, Any] = {"$set": event.properties}
    elif event.kind == "group":
        ((group_type, group_key),) = event.groups.items()
        properties = {
            "$group_type": group_type,
            "$group_key": group_key,
            "$group_set": event.properties,
        }
    elif event.groups:
        properties = {**event.properties, "$groups": event.groups, **_LIB}
    else:
        properties = {**event.properties, **_LIB}
    if event.kind in ("identify", "group"):
        properties.update(_LIB)
    return {
        "event": event.name,
        "distinct_id": event.distinct_id,
        "properties": properties,
        "timestamp": event.timestamp.isoformat(),
        "uuid": event.uuid,
    }


@traced("_send")
class PostHogAnalytics(Analytics):
    """Events batched to the provider's ``/batch/`` endpoint from a bounded buffer."""

    adapter_name = "analytics_b"

    def __init__(
        self,
        options: AnalyticsOptions,
        *,
        instance: str = "default",
        batch_size: int = BATCH_SIZE,
        max_buffer: int = MAX_BUFFER,
        flush_interval: float = FLUSH_INTERVAL,
        background: bool = True,
    ) -> None:
        """Check the options and start the flush thread; nothing is sent until an event.

        ``background=False`` starts no thread: only :meth:`flush` and :meth:`close` send
        (a process that flushes at the end of each job or request, and the tests of the
        buffer bound).
        """
        self.configure(options, instance=instance)
        if batch_size < 1 or max_buffer < batch_size or flush_interval <= 0:
            raise ValueError("need 1 <= batch_size <= max_buffer and flush_interval > 0")
        self._api_key = provider.required(
            options.api_key,
            service="analytics",
            field="api_key",
            adapter="analytics_b",
            instance=instance,
        )
        self._ep = provider.endpoint(
            options, service="analytics", default=DEFAULT_ENDPOINT, instance=instance
        )
        self._endpoint = self._ep.url
        allow_insecure, allow_private = self._ep.allow_insecure, self._ep.allow_private
        if allow_insecure or allow_private:
            allowed = [("plain http", allow_insecure), ("private addresses", allow_private)]
            logger.warning(
                "analytics.%s: analytics_b allows %s",
                instance,
                " and ".join(what for what, on in allowed if on),
            )
        self.batch_size, self.max_buffer, self.flush_interval = (
            batch_size,
            max_buffer,
            flush_interval,
        )
        self._session = provider.requests_session(self._ep)
        self._buffer: deque[dict[str, Any]] = deque()
        self._lock = threading.Lock()  # the buffer and the counters
        self._send_lock = threading.Lock()  # one batch in flight at a time
        self._counts = {"sent": 0, "dropped": 0, "failed": 0}
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if background:
            self._thread = threading.Thread(
                target=self._run, name=f"toolkit-analytics-{instance}-flush", daemon=True
            )
            self._thread.start()

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        return cls(ctx.options, instance=ctx.instance)

    def __repr__(self) -> str:
        return f"<PostHogAnalytics instance={self.instance!r} adapter='analytics_b'>"

    # ------------------------------------------------------------------ buffer

    def _emit(self, event: Event) -> None:
        message = wire_message(event)
        with self._lock:
            buffer = self._buffer
            buffer.append(message)
            if len(buffer) > self.max_buffer:
                self._overflow()
            full = len(buffer) >= self.batch_size
        if full and self._thread is not None and not self._wake.is_set():
            self._wake.set()

    def _requeue(self, messages: list[dict[str, Any]]) -> None:
        """Put a failed batch back in front, within the bound; hold ``_lock``."""
        self._buffer.extendleft(reversed(messages))
        self._overflow()

    def _overflow(self) -> None:
        """Drop the oldest events beyond ``max_buffer`` and count them; hold ``_lock``."""
        over = len(self._buffer) - self.max_buffer
        if over <= 0:
            return
        for _ in range(over):
            self._buffer.popleft()
        before = self._counts["dropped"]
        self._counts["dropped"] = before + over
        if before == 0 or before // 1000 != (before + over) // 1000:
            logger.warning(
                "analytics.%s: buffer full (%d events); %d oldest events dropped so far",
                self.instance,
                self.max_buffer,
                before + over,
            )

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"queued": len(self._buffer), **self._counts}

    # ------------------------------------------------------------------ sending

    def flush(self) -> int:
        """Send every buffered event now; return how many were sent.

        Raises :class:`AnalyticsDeliveryError` on the first batch that fails (see the
        module docstring for which batches are kept).
        """
        sent = 0
        with self._send_lock:
            while True:
                with self._lock:
                    batch = [
                        self._buffer.popleft()
                        for _ in range(min(self.batch_size, len(self._buffer)))
                    ]
                if not batch:
                    return sent
                self._deliver(batch)
                sent += len(batch)

    def _deliver(self, batch: list[dict[str, Any]]) -> None:
        try:
            self._send(batch)
        except _FAILURES as exc:
            failure = provider.failure_of(exc)
            if failure is not None and failure.kind is provider.Kind.BLOCKED:
                with self._lock:
                    self._counts["failed"] += len(batch)
                raise provider.blocked_error(self._ep) from None
            if failure is not None and failure.status is not None:
                self._failed(batch, failure.retryable)
                raise AnalyticsDeliveryError(
                    self.instance, f"HTTP {failure.status}", retryable=failure.retryable
                ) from None
            self._failed(batch, True)
            raise AnalyticsDeliveryError(
                self.instance, type(exc).__name__, retryable=True
            ) from None
        with self._lock:
            self._counts["sent"] += len(batch)

    def _failed(self, batch: list[dict[str, Any]], retryable: bool) -> None:
        with self._lock:
            if retryable:
                self._requeue(batch)
            else:
                self._counts["failed"] += len(batch)

    def _send(self, batch: list[dict[str, Any]]) -> None:
        """One ``POST /batch/`` through the SDK's request function and the guarded session."""
        posthog_request.batch_post(
            self._api_key,
            host=self._endpoint,
            timeout=TIMEOUT,
            session=self._session,
            batch=batch,
            historical_migration=False,
        )

    def _run(self) -> None:
        """Flush when a batch is full or every ``flush_interval``, until closed."""
        while not self._stop.is_set():
            self._wake.wait(self.flush_interval)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.flush()
            except Exception as exc:  # the thread must outlive a provider outage
                logger.warning("analytics.%s: background flush failed: %s", self.instance, exc)
                self._stop.wait(self.flush_interval)  # no hot loop while it is down

    def close(self) -> None:
        """Stop the flush thread, send what is buffered, close the session."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=TIMEOUT)
        try:
            self.flush()
        except Exception as exc:
            left = self.stats()["queued"]
            logger.warning(
                "analytics.%s: final flush failed: %s; %d events not sent", self.instance, exc, left
            )
        finally:
            self._session.close()
