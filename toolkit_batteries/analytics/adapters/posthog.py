"""PostHog (adapter ``posthog``, canonical ``analytics_b``): the batch API.

Events go to its documented batch endpoint, ``POST <endpoint>/batch/`` with ``{"batch":
[...], "historical_migration": false, "sent_at", "api_key"}``, the body the official
SDK's request function (``posthog.request.batch_post``) sends, with the SDK's user agent
and host normalisation, and its ``APIError`` for a refusal. The body is assembled here
rather than by ``batch_post``: each event is queued as the JSON text built when it was
captured, around the very encoding of its properties that was measured against
``max_properties_bytes``, so a flush joins texts instead of walking and encoding every
event again (``batch_post`` walks the whole batch in Python for non-finite floats, which
the capture check already refused). The SDK's ``Client`` is not used: it sends through a
module-wide ``requests`` session that cannot be guarded without changing it for every
other user of the SDK in the process; this adapter posts through its own guarded one
(``core.outbound.requests_adapter``).

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

import json
import logging
import threading
from collections import deque
from datetime import UTC, datetime
from json.encoder import encode_basestring as json_string
from typing import Any, Self

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.core.outbound import OutboundBlockedError, provider
from toolkit_batteries.core.tracing import traced

from ..base import Analytics, AnalyticsDeliveryError, Checked, Event, encode_json
from ..options import AnalyticsOptions

try:
    import posthog.request as posthog_request
    import posthog.utils
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
    "wire_text",
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
#: ``_LIB`` as the JSON text that closes a properties object.
_LIB_JSON = encode_json(_LIB)[1:]
#: The SDK's request headers (``posthog.request.post``).
_HEADERS = {"Content-Type": "application/json", "User-Agent": posthog_request.USER_AGENT}
#: Caller property names the wire shape sets itself: such events take the dict path.
_RESERVED = ('"$lib', '"$groups"')


def wire_message(event: Event) -> dict[str, Any]:
    """Return ``event`` in the provider's batch-item shape."""
    return _wire(
        event.kind,
        event.name,
        event.distinct_id,
        event.properties,
        event.timestamp,
        event.uuid,
        event.groups,
    )


def _wire(
    kind: str,
    name: str,
    distinct_id: str,
    properties: dict[str, Any],
    timestamp: datetime,
    event_id: str,
    groups: dict[str, str],
) -> dict[str, Any]:
    return {
        "event": name,
        "distinct_id": distinct_id,
        "properties": _wire_properties(kind, properties, groups),
        "timestamp": timestamp.isoformat(),
        "uuid": event_id,
    }


def _wire_properties(
    kind: str, properties: dict[str, Any], groups: dict[str, str]
) -> dict[str, Any]:
    if kind == "capture":
        if groups:
            return {**properties, "$groups": groups, **_LIB}
        return {**properties, **_LIB}
    if kind == "identify":
        return {"$set": properties, **_LIB}
    ((group_type, group_key),) = groups.items()
    return {
        "$group_type": group_type,
        "$group_key": group_key,
        "$group_set": properties,
        **_LIB,
    }


def wire_text(
    kind: str,
    name: str,
    distinct_id: str,
    encoded: str,
    timestamp: datetime,
    event_id: str,
    groups: dict[str, str],
) -> str:
    """Return the batch item of one checked call as JSON text, around ``encoded``
    (its properties' JSON text): ``json.loads`` of it is :func:`wire_message`'s dict."""
    if kind == "capture":
        if any(reserved in encoded for reserved in _RESERVED):
            # The caller set a name the wire shape sets too: merge as dicts (the wire's wins).
            props = encode_json(_wire_properties(kind, json.loads(encoded), groups))
        else:
            tail = f'"$groups":{encode_json(groups)},{_LIB_JSON}' if groups else _LIB_JSON
            props = f"{encoded[:-1]},{tail}" if len(encoded) > 2 else "{" + tail
    elif kind == "identify":
        props = f'{{"$set":{encoded},{_LIB_JSON}'
    else:
        ((group_type, group_key),) = groups.items()
        props = (
            f'{{"$group_type":{json_string(group_type)},"$group_key":{json_string(group_key)},'
            f'"$group_set":{encoded},{_LIB_JSON}'
        )
    return (
        f'{{"event":{json_string(name)},"distinct_id":{json_string(distinct_id)},'
        f'"properties":{props},"timestamp":"{timestamp.isoformat()}","uuid":"{event_id}"}}'
    )


def _utf8_safe(item: str) -> str:
    """Return ``item``, or its ASCII-escaped form when it holds a lone surrogate (a name or
    an id from a badly decoded source): UTF-8 cannot carry one, and one such event must
    not fail its whole batch at flush. ``batch_post`` escapes them the same way."""
    try:
        item.encode()
    except UnicodeEncodeError:
        return json.dumps(json.loads(item), separators=(",", ":"))
    return item


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
        # What posthog.request.post builds from the host and the key, once.
        host = posthog.utils.remove_trailing_slash(posthog_request.normalize_host(self._endpoint))
        self._url = host + posthog_request.EVENTS_ENDPOINT
        self._key_json = json_string(self._api_key)
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
        self._buffer: deque[str] = deque()  # batch items as JSON text (wire_text)
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
        self._queue(
            event.kind,
            event.name,
            event.distinct_id,
            encode_json(event.properties),
            None,
            event.timestamp,
            event.uuid,
            event.groups,
        )

    def _queue(self, *checked: *Checked) -> None:
        """Queue the checked call (:meth:`Analytics._queue`'s fields) as its batch item's
        JSON text, around the properties' measured encoding: no Event, no dict."""
        kind, name, distinct_id, encoded, _, timestamp, event_id, groups = checked
        item = wire_text(kind, name, distinct_id, encoded, timestamp, event_id, groups)
        if not item.isascii():
            item = _utf8_safe(item)
        with self._lock:
            buffer = self._buffer
            buffer.append(item)
            if len(buffer) > self.max_buffer:
                self._overflow()
            full = len(buffer) >= self.batch_size
        if full and self._thread is not None and not self._wake.is_set():
            self._wake.set()

    def _requeue(self, messages: list[str]) -> None:
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

    def _deliver(self, batch: list[str]) -> None:
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

    def _failed(self, batch: list[str], retryable: bool) -> None:
        with self._lock:
            if retryable:
                self._requeue(batch)
            else:
                self._counts["failed"] += len(batch)

    def _send(self, batch: list[str]) -> None:
        """One ``POST /batch/`` through the guarded session: ``posthog.request.batch_post``'s
        body, headers and refusal (any status but 200 raises the SDK's ``APIError``)."""
        sent_at = datetime.now(UTC).isoformat()
        body = (
            f'{{"batch":[{",".join(batch)}],"historical_migration":false,'
            f'"sent_at":"{sent_at}","api_key":{self._key_json}}}'
        )
        response = self._session.post(
            self._url, data=body.encode(), headers=_HEADERS, timeout=TIMEOUT
        )
        if response.status_code != 200:
            raise posthog_request.APIError(response.status_code, "batch refused")

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
