"""The eventbus service: publish/subscribe by topic, in process or across processes.

::

    bus = services.eventbus()
    subscription = bus.subscribe("orders.created", lambda event: print(event.json()))
    bus.publish("orders.created", {"id": 7})         # a dict travels as JSON
    bus.publish("audit", b"raw bytes")                # bytes travel as they are
    subscription.unsubscribe()

Delivery is **at most once and never blocks the publisher**. Every subscription has its
own bounded buffer (``buffer_size`` events) and its own worker thread, so a slow or
failing handler delays and harms only itself:

* a handler that raises is logged (``toolkit.eventbus``, with the traceback) and counted
  in ``failed``; the next event is delivered as usual;
* a handler still running after ``handler_timeout`` is logged and counted in
  ``timed_out`` and **skipped**: a fresh worker takes over the subscription's next events
  while the stuck call is abandoned (Python cannot stop a thread; it finishes, or not, on
  its own, and its late result is ignored). At most ``max_abandoned`` (4) abandoned calls
  of one subscription may still be running: the next timeout **stops the subscription**
  (its buffer is discarded and counted in ``dropped``) and logs an error, so a handler
  that never returns costs a bounded number of threads instead of one per event;
* when a subscription's buffer is full, the **oldest** waiting event is dropped and
  counted in ``dropped`` (with a warning at most once per second and subscription), so a
  stalled consumer never stalls a request that publishes. Use the ``queue`` or
  ``outbox`` service when every event must arrive.

``close()`` refuses new events, lets every worker drain its buffer for up to
``close_timeout``, then stops; what is still buffered then is counted in ``undelivered``
and logged. No thread is started once ``close()`` has returned (the timeout watchdog is
joined; abandoned calls that never return are the only threads left behind).

Handlers receive an :class:`Event` whose ``data`` is always ``bytes`` (a published dict
arrives as its JSON), so a handler behaves the same on every adapter.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError, ToolkitError

__all__ = [
    "BusSettings",
    "Event",
    "EventBus",
    "EventBusClosedError",
    "Handler",
    "LocalDispatcher",
    "Subscription",
    "TooManyHandlersError",
    "encode_payload",
    "settings_from_options",
]

logger = logging.getLogger("toolkit.eventbus")

#: A handler takes the event; its return value is ignored. ``async def`` works too.
Handler = Callable[["Event"], Any]


class EventBusClosedError(ToolkitError, RuntimeError):
    """The bus was closed; nothing can be published or subscribed any more."""

    code = "eventbus_closed"

    def __init__(self, instance: str = "default") -> None:
        self.instance = instance
        super().__init__(f"eventbus.{instance}: the event bus is closed")


class TooManyHandlersError(ToolkitError, RuntimeError):
    """Subscribing would exceed ``max_handlers`` live subscriptions on this bus."""

    code = "too_many_handlers"
    params = ("instance", "limit")
    template = (
        "eventbus.{instance}: max_handlers ({limit}) subscriptions are already live; "
        "unsubscribe one or raise max_handlers"
    )


@dataclass(frozen=True, slots=True)
class Event:
    """One published event as a handler receives it."""

    topic: str
    #: The payload: the published bytes, or the JSON of a published dict.
    data: bytes

    def json(self) -> Any:
        """Decode ``data`` as JSON (what ``publish(topic, {...})`` sent)."""
        return json.loads(self.data)


def encode_payload(payload: bytes | bytearray | memoryview | Mapping[str, Any]) -> bytes:
    """Return the bytes that travel for ``payload``: bytes as they are, a mapping as JSON."""
    if isinstance(payload, bytes):
        return payload
    if isinstance(payload, bytearray | memoryview):
        return bytes(payload)
    if isinstance(payload, Mapping):
        return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    raise TypeError("eventbus payload must be bytes or a dict")


def check_topic(topic: str) -> str:
    """Return ``topic`` if it is a non-empty string; raise ``ValueError`` otherwise."""
    if not isinstance(topic, str) or not topic:
        raise ValueError("eventbus topic must be a non-empty string")
    return topic


@dataclass(frozen=True, slots=True)
class BusSettings:
    """Validated options shared by the adapters (seconds as floats)."""

    buffer_size: int = 1024
    max_handlers: int = 128
    handler_timeout: float = 30.0
    close_timeout: float = 5.0
    #: Abandoned (timed-out, still running) calls one subscription may have before it is
    #: stopped; each one holds a thread Python cannot stop.
    max_abandoned: int = 4


def settings_from_options(options: Any, *, instance: str = "default") -> BusSettings:
    """Validate an ``EventBusOptions``; raise :class:`InvalidOptionsError` naming the field."""

    def invalid(field: str, reason: str) -> InvalidOptionsError:
        return InvalidOptionsError("eventbus", field, reason, instance=instance)

    if options.buffer_size < 1:
        raise invalid("buffer_size", "must be at least 1")
    if options.max_handlers < 1:
        raise invalid("max_handlers", "must be at least 1")
    handler_timeout = options.handler_timeout.total_seconds()
    close_timeout = options.close_timeout.total_seconds()
    if handler_timeout <= 0:
        raise invalid("handler_timeout", "must be a positive duration")
    if close_timeout <= 0:
        raise invalid("close_timeout", "must be a positive duration")
    return BusSettings(options.buffer_size, options.max_handlers, handler_timeout, close_timeout)


def _as_callable(handler: Handler) -> Handler:
    """Return ``handler``, wrapping an ``async def`` so a worker thread can run it."""
    if not callable(handler):
        raise TypeError("eventbus handler must be callable")
    if inspect.iscoroutinefunction(handler):
        import asyncio  # only when an async handler subscribes

        @functools.wraps(handler)
        def run(event: Event) -> Any:
            return asyncio.run(handler(event))

        return run
    return handler


class Subscription:
    """One handler on one topic, with its own buffer and worker thread.

    Counters (read them any time): ``delivered`` (the handler returned), ``failed`` (it
    raised), ``timed_out`` (it ran past ``handler_timeout`` and was skipped), ``dropped``
    (the buffer was full and the oldest event gave way).
    """

    def __init__(self, dispatcher: LocalDispatcher, topic: str, handler: Handler) -> None:
        self.topic = topic
        self.handler = handler
        self._call = _as_callable(handler)
        self._dispatcher = dispatcher
        self._buffer: deque[Event] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._active = True
        self._draining = False
        #: Incremented each time a worker is replaced; an older worker then exits.
        self._generation = 0
        #: monotonic start of the handler call in progress, or None.
        self._running_since: float | None = None
        #: Timed-out calls whose threads have not returned yet.
        self._abandoned = 0
        self._last_drop_warning = 0.0
        self._worker: threading.Thread | None = None
        self.delivered = 0
        self.failed = 0
        self.timed_out = 0
        self.dropped = 0

    def __repr__(self) -> str:
        state = "active" if self._active else "stopped"
        return f"<Subscription {self.topic!r} {state} delivered={self.delivered}>"

    @property
    def active(self) -> bool:
        """Tell whether the handler still receives events."""
        return self._active

    @property
    def abandoned(self) -> int:
        """Return how many timed-out calls of this handler are still running."""
        return self._abandoned

    @property
    def pending(self) -> int:
        """Return how many events wait in the buffer."""
        return len(self._buffer)

    def unsubscribe(self) -> None:
        """Stop delivery: waiting events are discarded; a call in progress may finish.

        Calling it twice, or after the bus closed, does nothing.
        """
        self._dispatcher._remove(self)
        self._stop(discard=True)

    # ------------------------------------------------------------------ internals

    def _start(self) -> None:
        with self._cond:
            self._spawn_worker()

    def _spawn_worker(self) -> None:
        """Start a worker for the current generation (condition held)."""
        generation = self._generation
        worker = threading.Thread(
            target=self._work,
            args=(generation,),
            name=f"toolkit-eventbus-{self._dispatcher.instance}-{self.topic}",
            daemon=True,
        )
        self._worker = worker
        worker.start()

    def _offer(self, event: Event) -> None:
        """Queue ``event``; drop the oldest when the buffer is full. Never blocks long."""
        with self._cond:
            if not self._active or self._draining:
                return
            if len(self._buffer) >= self._dispatcher.settings.buffer_size:
                self._buffer.popleft()
                self.dropped += 1
                now = time.monotonic()
                if now - self._last_drop_warning >= 1.0:
                    self._last_drop_warning = now
                    logger.warning(
                        "eventbus.%s: buffer of a %r subscription is full; dropped the "
                        "oldest event (%d dropped so far)",
                        self._dispatcher.instance,
                        self.topic,
                        self.dropped,
                    )
            self._buffer.append(event)
            self._cond.notify()

    def _work(self, generation: int) -> None:
        cond = self._cond
        while True:
            with cond:
                while not self._buffer and self._active and not self._draining:
                    cond.wait()
                if self._generation != generation:
                    return
                if not self._buffer or not self._active:
                    self._worker = None
                    cond.notify_all()
                    return
                event = self._buffer.popleft()
                self._running_since = time.monotonic()
            try:
                self._call(event)
                ok = True
            except Exception:
                ok = False
                logger.exception(
                    "eventbus.%s: a %r handler raised; delivery continues",
                    self._dispatcher.instance,
                    self.topic,
                )
            with cond:
                if self._generation != generation:
                    self._abandoned -= 1  # the watchdog counted this call as timed out
                    return
                if ok:
                    self.delivered += 1
                else:
                    self.failed += 1
                self._running_since = None
                cond.notify_all()

    def _check_timeout(self, now: float, timeout: float) -> None:
        """Skip a call running past ``timeout``: count it, log it, start a new worker.

        Past ``max_abandoned`` stuck calls, stop the subscription instead: a new worker
        per timed-out call would leak a thread per event.
        """
        limit = self._dispatcher.settings.max_abandoned
        with self._cond:
            started = self._running_since
            if started is None or now - started < timeout or not self._active:
                return
            self.timed_out += 1
            self._generation += 1
            self._running_since = None
            self._abandoned += 1
            stuck = self._abandoned
            if stuck < limit:
                self._spawn_worker()
            else:
                self._active = False
                self.dropped += len(self._buffer)
                self._buffer.clear()
                self._worker = None
                self._cond.notify_all()
        if stuck >= limit:
            self._dispatcher._remove(self)
            logger.error(
                "eventbus.%s: a %r handler has %d calls stuck past handler_timeout (%gs); "
                "stopped the subscription so they cannot pile up threads",
                self._dispatcher.instance,
                self.topic,
                stuck,
                timeout,
            )
            return
        logger.warning(
            "eventbus.%s: a %r handler ran past handler_timeout (%gs); skipped it and moved "
            "on (the call itself cannot be stopped)",
            self._dispatcher.instance,
            self.topic,
            timeout,
        )

    def _drain(self) -> None:
        """Stop accepting events and let the worker finish the buffer, then exit."""
        with self._cond:
            self._draining = True
            self._cond.notify_all()

    def _wait_drained(self, deadline: float) -> bool:
        """Wait until the buffer is empty and no call runs; False at the deadline."""
        with self._cond:
            while self._buffer or self._running_since is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(min(remaining, 0.05))
            return True

    def _stop(self, *, discard: bool) -> int:
        """Deactivate; return how many waiting events were discarded."""
        with self._cond:
            self._active = False
            left = len(self._buffer) if discard else 0
            if discard:
                self._buffer.clear()
            self._cond.notify_all()
            return left


class LocalDispatcher:
    """Subscriptions of one bus in this process, their workers and the timeout watchdog."""

    def __init__(self, settings: BusSettings, *, instance: str = "default") -> None:
        self.settings = settings
        self.instance = instance
        self._lock = threading.Lock()
        self._topics: dict[str, tuple[Subscription, ...]] = {}
        self._count = 0
        self._closed = False
        self._stop_watchdog = threading.Event()
        self._watchdog: threading.Thread | None = None
        self._counter_lock = threading.Lock()
        #: Subscriptions being drained by close(); the watchdog still looks after them.
        self._closing: tuple[Subscription, ...] = ()
        #: Counters of subscriptions that are gone, so stats() stays cumulative.
        self.retired = {"delivered": 0, "failed": 0, "timed_out": 0, "dropped": 0}
        self.published = 0
        self.undelivered = 0

    @property
    def closed(self) -> bool:
        """Tell whether :meth:`close` ran."""
        return self._closed

    def topics(self) -> tuple[str, ...]:
        """Return the topics with at least one live subscription."""
        return tuple(self._topics)

    def subscriptions(self) -> tuple[Subscription, ...]:
        """Return every live subscription."""
        return tuple(s for subs in self._topics.values() for s in subs)

    def add(self, topic: str, handler: Handler) -> tuple[Subscription, Any]:
        """Register a subscription; return it and what :meth:`topic_added` returned."""
        check_topic(topic)
        with self._lock:
            if self._closed:
                raise EventBusClosedError(self.instance)
            if self._count >= self.settings.max_handlers:
                raise TooManyHandlersError(self.instance, self.settings.max_handlers)
            subscription = Subscription(self, topic, handler)
            current = self._topics.get(topic, ())
            self._topics[topic] = (*current, subscription)
            self._count += 1
            token = None if current else self.topic_added(topic)
            if self._watchdog is None:
                self._watchdog = threading.Thread(
                    target=self._watch, name=f"toolkit-eventbus-{self.instance}-watch", daemon=True
                )
                self._watchdog.start()
        subscription._start()
        return subscription, token

    def _remove(self, subscription: Subscription) -> bool:
        """Forget ``subscription``; return True when its topic has no subscription left."""
        with self._lock:
            current = self._topics.get(subscription.topic, ())
            if subscription not in current:
                return False
            rest = tuple(s for s in current if s is not subscription)
            if rest:
                self._topics[subscription.topic] = rest
            else:
                del self._topics[subscription.topic]
                self.topic_removed(subscription.topic)
            self._count -= 1
            self._retire((subscription,))
            return not rest

    def _retire(self, subscriptions: tuple[Subscription, ...]) -> None:
        """Fold the counters of departing subscriptions into :attr:`retired`."""
        for subscription in subscriptions:
            for name in self.retired:
                self.retired[name] += getattr(subscription, name)

    def topic_added(self, topic: str) -> Any:
        """React to ``topic`` getting its first local subscription (a hook; lock held).

        The kvserver adapter subscribes the channel here. Whatever it returns comes back
        from :meth:`add`. It must not block.
        """
        return None

    def topic_removed(self, topic: str) -> None:
        """React to the last local subscription of ``topic`` going away (a hook; lock held)."""

    def count_published(self) -> None:
        """Count one published event."""
        with self._counter_lock:
            self.published += 1

    def deliver(self, event: Event) -> int:
        """Offer ``event`` to every subscription of its topic; return how many."""
        targets = self._topics.get(event.topic, ())
        for subscription in targets:
            subscription._offer(event)
        return len(targets)

    def _watch(self) -> None:
        timeout = self.settings.handler_timeout
        tick = min(1.0, max(0.01, timeout / 10))
        while not self._stop_watchdog.wait(tick):
            now = time.monotonic()
            for subscription in (*self.subscriptions(), *self._closing):
                subscription._check_timeout(now, timeout)

    def close(self, timeout: float | None = None) -> int:
        """Drain every subscription for up to ``timeout`` (``close_timeout``), then stop.

        Return how many events were still buffered (and so never delivered).
        """
        with self._lock:
            if self._closed:
                return 0
            self._closed = True
            subscriptions = self.subscriptions()
            self._closing = subscriptions
            self._topics = {}
            self._count = 0
        deadline = time.monotonic() + (self.settings.close_timeout if timeout is None else timeout)
        for subscription in subscriptions:
            subscription._drain()
        for subscription in subscriptions:
            subscription._wait_drained(deadline)
        left = sum(subscription._stop(discard=True) for subscription in subscriptions)
        self._stop_watchdog.set()
        watchdog = self._watchdog
        if watchdog is not None and watchdog is not threading.current_thread():
            watchdog.join(max(0.0, min(2.0, deadline - time.monotonic())) + 1.0)
        self._closing = ()
        with self._lock:
            self._retire(subscriptions)
        self.undelivered += left
        if left:
            logger.warning(
                "eventbus.%s: close_timeout passed with %d events undelivered; they are dropped",
                self.instance,
                left,
            )
        return left


class EventBus(Service):
    """Publish/subscribe; adapters implement :meth:`publish` and the transport."""

    service_name: ClassVar[str] = "eventbus"

    def __init__(self, settings: BusSettings, *, instance: str = "default") -> None:
        self.settings = settings
        self.instance = instance
        self._dispatcher = self._make_dispatcher()

    def _make_dispatcher(self) -> LocalDispatcher:
        return LocalDispatcher(self.settings, instance=self.instance)

    def __repr__(self) -> str:
        state = "closed" if self._dispatcher.closed else "open"
        return f"<{type(self).__name__} {self.adapter_name} eventbus.{self.instance} {state}>"

    @property
    def closed(self) -> bool:
        """Tell whether :meth:`close` ran."""
        return self._dispatcher.closed

    def publish(self, topic: str, payload: bytes | Mapping[str, Any]) -> None:
        """Send ``payload`` to every subscription of ``topic``; never waits for handlers."""
        raise NotImplementedError

    def subscribe(self, topic: str, handler: Handler) -> Subscription:
        """Call ``handler(event)`` for each event published on ``topic`` from now on.

        Raise :class:`TooManyHandlersError` beyond ``max_handlers`` live subscriptions.
        """
        subscription, _ = self._dispatcher.add(topic, handler)
        return subscription

    def subscriptions(self) -> tuple[Subscription, ...]:
        """Return the live subscriptions of this bus (in this process)."""
        return self._dispatcher.subscriptions()

    def stats(self) -> dict[str, int]:
        """Return counters since the bus opened, including unsubscribed handlers.

        ``published``, ``delivered``, ``failed``, ``timed_out``, ``dropped``,
        ``undelivered`` (still buffered when close gave up) and the live
        ``subscriptions``.
        """
        dispatcher = self._dispatcher
        with dispatcher._lock:
            subscriptions = dispatcher.subscriptions()
            totals = {
                name: retired + sum(getattr(s, name) for s in subscriptions)
                for name, retired in dispatcher.retired.items()
            }
        return {
            "subscriptions": len(subscriptions),
            "published": dispatcher.published,
            **totals,
            "undelivered": dispatcher.undelivered,
        }

    def close(self) -> None:
        """Refuse new events, drain the buffers for up to ``close_timeout``, then stop."""
        self._dispatcher.close()
