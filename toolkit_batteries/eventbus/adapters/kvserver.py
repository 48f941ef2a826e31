"""The ``kvserver`` adapter: publish/subscribe across processes through Redis pub/sub.

Why pub/sub and not streams: the bus promises what the ``memory`` adapter does, fan-out
to whoever is subscribed *now*, at most once, never blocking the publisher. Pub/sub is
exactly that on the server, with no consumer groups to create, trim or clean up. Streams
add durability and replay, which belong to the ``queue`` and ``outbox`` services.

* ``publish`` is one ``PUBLISH <kvserver.prefix>eventbus:<topic> <bytes>``; it raises
  :class:`ServiceUnavailableError` when the server cannot be reached (bounded by the
  client's timeouts; a refused connection fails at once), and never waits for handlers.
* One listener thread per bus (started by the first ``subscribe``) owns a pub/sub
  connection, subscribes a channel when its topic gets its first local subscription and
  unsubscribes it when the last goes, and hands each message to the local subscriptions,
  which then behave exactly as on ``memory`` (own buffer, own worker, timeouts, drops).
  Events published by this process come back through the server like everyone else's.
* When the connection drops, the listener logs it once, reconnects with a backoff (50 ms
  doubling to 1 s) and subscribes every wanted channel again, logging the recovery.
  Events published while it was away are lost (pub/sub keeps nothing).
* ``subscribe`` returns once the server confirmed the channel, so an event published
  right after it (from any process) is received; it raises ``ServiceUnavailableError``
  when no confirmation comes within 5 s.
* ``close`` stops the listener (closing its connection), then drains the local buffers
  for up to ``close_timeout``.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Mapping
from typing import Any

from toolkit_batteries.core.errors import MissingExtraError, ServiceUnavailableError
from toolkit_batteries.core.kvkeys import SharedClientOpen
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.core.transport import kv_errors, kv_unreachable
from toolkit_batteries.eventbus.base import (
    BusSettings,
    Event,
    EventBus,
    EventBusClosedError,
    Handler,
    LocalDispatcher,
    Subscription,
    check_topic,
    encode_payload,
    settings_from_options,
)

with MissingExtraError.guard("eventbus", "kvserver", "kvserver", "redis"):
    import redis  # noqa: F401  (the extra's absence is reported at import)

__all__ = ["SUBSCRIBE_TIMEOUT", "KVServerEventBus", "channel_name"]

logger = logging.getLogger("toolkit.eventbus")

#: Seconds ``subscribe`` waits for the server to confirm a new channel.
SUBSCRIBE_TIMEOUT = 5.0
#: Seconds the listener waits for a message before looking at its commands again.
POLL = 0.05

_UNREACHABLE = kv_errors()


def channel_name(prefix: str, topic: str) -> str:
    """Return the server channel of ``topic``: ``<prefix>eventbus:<topic>``."""
    return f"{prefix}eventbus:{topic}"


class _Listener:
    """The thread that owns the pub/sub connection of one bus."""

    def __init__(
        self, client: Any, prefix: str, dispatcher: LocalDispatcher, instance: str
    ) -> None:
        self._client = client
        self._prefix = f"{prefix}eventbus:".encode()
        self._dispatcher = dispatcher
        self._instance = instance
        self._commands: queue.SimpleQueue[tuple[str, bytes, threading.Event | None]] = (
            queue.SimpleQueue()
        )
        #: channel -> confirmations waiting for the server's "subscribe" reply.
        self._wanted: dict[bytes, list[threading.Event]] = {}
        self._confirmed: set[bytes] = set()
        self._stop = threading.Event()
        self._lost = False
        #: Written by the thread only: every wanted channel is confirmed on a live link.
        self._ready = True
        self._thread = threading.Thread(
            target=self._run, name=f"toolkit-eventbus-{instance}-listener", daemon=True
        )
        self._thread.start()

    @property
    def listening(self) -> bool:
        """Tell whether every wanted channel is subscribed on a live connection."""
        return self._ready

    def subscribe(self, channel: bytes) -> threading.Event:
        """Ask for ``channel``; the returned event is set when the server confirms it."""
        confirmed = threading.Event()
        self._commands.put(("sub", channel, confirmed))
        return confirmed

    def unsubscribe(self, channel: bytes) -> None:
        """Drop ``channel``."""
        self._commands.put(("unsub", channel, None))

    def stop(self, timeout: float) -> None:
        """Stop the thread and close the connection; wait up to ``timeout`` seconds."""
        self._stop.set()
        self._thread.join(timeout)

    # ------------------------------------------------------------------ thread

    def _run(self) -> None:
        pubsub = None
        backoff = POLL
        while not self._stop.is_set():
            try:
                if pubsub is None:
                    pubsub = self._client.pubsub()
                    if self._wanted:
                        pubsub.subscribe(*self._wanted)
                self._apply_commands(pubsub)
                message = pubsub.get_message(timeout=POLL)
                if message is not None:
                    self._handle(message)
                self._ready = not self._lost and self._wanted.keys() <= self._confirmed
                backoff = POLL
            except _UNREACHABLE as exc:
                self._ready = False
                self._confirmed.clear()
                if not self._lost:
                    self._lost = True
                    logger.warning(
                        "eventbus.%s: lost the key-value server (%s); reconnecting, events "
                        "published meanwhile are not received",
                        self._instance,
                        type(exc).__name__,
                    )
                pubsub = self._discard(pubsub)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 1.0)
            except Exception:  # never let the listener die silently
                logger.exception("eventbus.%s: listener error; reconnecting", self._instance)
                self._ready = False
                self._confirmed.clear()
                pubsub = self._discard(pubsub)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 1.0)
        self._discard(pubsub)

    @staticmethod
    def _discard(pubsub: Any) -> None:
        if pubsub is not None:
            try:
                pubsub.close()
            except Exception:  # the connection is already broken; nothing to release
                logger.debug("eventbus: closing a broken pub/sub connection failed")

    def _apply_commands(self, pubsub: Any) -> None:
        while True:
            try:
                op, channel, confirmed = self._commands.get_nowait()
            except queue.Empty:
                return
            if op == "sub":
                waiters = self._wanted.setdefault(channel, [])
                if confirmed is not None:
                    if channel in self._confirmed:
                        confirmed.set()
                    else:
                        waiters.append(confirmed)
                if channel not in self._confirmed:
                    pubsub.subscribe(channel)
            elif self._wanted.pop(channel, None) is not None:
                # Confirmed or not: a SUBSCRIBE already sent is undone by this UNSUBSCRIBE
                # (the server answers in order); without it a subscription dropped before
                # its confirmation stays on the server for the connection's lifetime.
                self._confirmed.discard(channel)
                pubsub.unsubscribe(channel)

    def _handle(self, message: dict[str, Any]) -> None:
        kind, channel = message["type"], message["channel"]
        if kind == "message":
            if channel.startswith(self._prefix):
                topic = channel[len(self._prefix) :].decode("utf-8", "replace")
                self._dispatcher.deliver(Event(topic, message["data"]))
        elif kind == "subscribe":
            if channel not in self._wanted:
                return  # unsubscribed meanwhile; its UNSUBSCRIBE was sent after this
            self._confirmed.add(channel)
            for waiter in self._wanted[channel]:
                waiter.set()
            self._wanted[channel] = []
            if self._lost and self._wanted.keys() <= self._confirmed:
                self._lost = False
                logger.warning(
                    "eventbus.%s: reconnected to the key-value server; %d channels subscribed",
                    self._instance,
                    len(self._confirmed),
                )


class _KVDispatcher(LocalDispatcher):
    """Local delivery whose topics follow the listener's channels."""

    def __init__(self, settings: BusSettings, bus: KVServerEventBus, instance: str) -> None:
        super().__init__(settings, instance=instance)
        self._bus = bus

    def topic_added(self, topic: str) -> threading.Event:
        return self._bus._listener_for().subscribe(self._bus._channel(topic))

    def topic_removed(self, topic: str) -> None:
        listener = self._bus._listener
        if listener is not None:
            listener.unsubscribe(self._bus._channel(topic))


@traced("publish")
class KVServerEventBus(SharedClientOpen, EventBus):
    """Publish/subscribe shared by every process connected to the same server.

    ``open()`` borrows the container's client for ``kvserver.*``.
    """

    adapter_name = "kvserver"
    settings_of = staticmethod(settings_from_options)

    def __init__(
        self,
        client: Any,
        settings: BusSettings,
        *,
        prefix: str = "",
        instance: str = "default",
        subscribe_timeout: float = SUBSCRIBE_TIMEOUT,
    ) -> None:
        """Wrap a ``redis.Redis`` client; nothing connects until the first call."""
        self._client = client
        self.subscribe_timeout = subscribe_timeout
        self._prefix = prefix
        self._listener: _Listener | None = None
        self._listener_lock = threading.Lock()
        self._unreachable = kv_unreachable(
            "eventbus", instance, "the key-value server did not answer", keep_cause=True
        )
        super().__init__(settings, instance=instance)

    def _make_dispatcher(self) -> LocalDispatcher:
        return _KVDispatcher(self.settings, self, self.instance)

    @property
    def listening(self) -> bool:
        """Tell whether every subscribed topic is live on the server right now."""
        listener = self._listener
        return listener is not None and listener.listening

    def _channel(self, topic: str) -> bytes:
        return channel_name(self._prefix, topic).encode()

    def _listener_for(self) -> _Listener:
        with self._listener_lock:
            if self._listener is None:
                self._listener = _Listener(
                    self._client, self._prefix, self._dispatcher, self.instance
                )
            return self._listener

    def publish(self, topic: str, payload: bytes | Mapping[str, Any]) -> None:
        """``PUBLISH`` the payload on the topic's channel; raise if the server is away."""
        data = encode_payload(payload)
        channel = self._channel(check_topic(topic))
        if self._dispatcher.closed:
            raise EventBusClosedError(self.instance)
        with self._unreachable:
            self._client.publish(channel, data)
        self._dispatcher.count_published()

    def subscribe(self, topic: str, handler: Handler) -> Subscription:
        """Subscribe locally and, for a new topic, on the server; wait for its confirmation."""
        subscription, confirmed = self._dispatcher.add(topic, handler)
        if confirmed is not None and not confirmed.wait(self.subscribe_timeout):
            subscription.unsubscribe()
            raise ServiceUnavailableError(
                "eventbus",
                "the key-value server did not confirm the subscription",
                instance=self.instance,
            )
        return subscription

    @property
    def listener_thread(self) -> threading.Thread | None:
        """Return the listener thread, if a subscription ever started it."""
        return None if self._listener is None else self._listener._thread

    def close(self) -> None:
        """Stop listening, then drain local buffers for up to ``close_timeout``."""
        listener = self._listener
        if listener is not None:
            listener.stop(min(1.0, self.settings.close_timeout))
        self._dispatcher.close()
