"""The relay: claim committed messages in batches, publish them, mark them sent.

::

    relay = services.outbox().relay()          # publisher from the ``publisher`` option
    relay.run(install_signal_handlers=True)    # until SIGTERM / SIGINT / relay.stop()

One batch (:meth:`Relay.run_once`):

1. claim up to ``batch_size`` pending messages whose backoff has passed, leasing them
   to this relay for ``lock_seconds`` (``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so
   relays running side by side never claim one row twice; the ``cdc`` adapter reads the
   candidates from its replication slot instead);
2. publish each, in row order, to the publisher: the ``eventbus`` battery
   (``bus.publish(topic, envelope)``), the ``queue`` battery (``queue.push(topic,
   envelope)``) or a callable given to :meth:`Outbox.relay`;
3. mark the published ones sent in one statement; a failed publish is retried after the
   ``retry`` policy's backoff (:func:`toolkit_batteries.resilience.backoff.backoff`) or,
   at its ``max_attempts``-th attempt, moved to the dead list.

A relay killed between 2 and 3 leaves its rows leased; when the lease ends another relay
(or the restarted one) publishes them again: at-least-once, which the consumer's inbox
turns into exactly-once effects.

**Abandoned rows** (claimed before and never settled: the relay holding them died, was
killed, or hung past ``lock_seconds``) may hold the message that stops relays (a poison
message that crashes or hangs the publisher). A claim that returns one keeps the rows
up to the first abandoned one, gives the rest back untried (their attempt undone), and
publishes and marks what it kept one message at a time. So a poison message costs its
batch neighbours one redelivery, never one per crash, and the messages behind it are
not charged attempts for it. An abandoned row claimed for more than ``max_attempts``
attempts is moved to the dead list without being published again, and the messages
behind it flow on. SIGTERM and SIGINT (with ``install_signal_handlers``)
let the batch in flight finish, marks included, then stop; a second signal exits at once.
Sent messages older than ``retention`` are purged once a minute.
"""

from __future__ import annotations

import logging
import os
import random
import signal
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import timedelta
from types import FrameType
from typing import TYPE_CHECKING, Any, Literal

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.groups import RetryPolicy
from toolkit_batteries.core.redaction import redact_string
from toolkit_batteries.resilience.backoff import backoff

from .base import MAX_ERROR_LENGTH, Record

if TYPE_CHECKING:
    from .base import Outbox

__all__ = ["DEFAULT_RETRY", "BatchResult", "Relay", "RelayStats", "publisher_for"]

logger = logging.getLogger("toolkit.outbox")

#: What became of a message whose publish failed: retried later, or moved to the dead list.
Failure = Literal["retried", "dead"]

#: The backoff when ``retry`` is unset: 1 s doubling to 5 min, jittered by 10 %.
DEFAULT_RETRY = RetryPolicy(
    base_delay=timedelta(seconds=1),
    max_delay=timedelta(minutes=5),
    multiplier=2.0,
    jitter=0.1,
)
#: Seconds between two retention purges of a running relay.
PURGE_EVERY = 60.0


def publisher_for(outbox: Outbox) -> Callable[[Record], Any]:
    """Return the publish function the ``publisher`` option names.

    ``eventbus`` and ``queue`` open that battery's default instance through the outbox's
    container (only now, so a web process that only publishes never opens them).
    """
    name = outbox.settings.publisher
    container = outbox._container
    if not name:
        raise InvalidOptionsError(
            "outbox",
            "publisher",
            "is unset: set it to eventbus or queue, or give relay() a publish function",
            instance=outbox.instance,
        )
    if container is None:  # pragma: no cover - an outbox built by hand
        raise InvalidOptionsError(
            "outbox", "publisher", "needs a container to open it", instance=outbox.instance
        )
    if name == "eventbus":
        bus = container.eventbus()
        return lambda record: bus.publish(record.topic, record.envelope())
    queue = container.queue()
    return lambda record: queue.push(record.topic, record.envelope())


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What one batch did."""

    claimed: int = 0
    sent: int = 0
    retried: int = 0
    dead: int = 0
    #: Claimed rows given back untried behind an abandoned row (a claim to come takes them).
    released: int = 0


@dataclass(frozen=True, slots=True)
class RelayStats(BatchResult):
    """Totals of a relay's batches: every count of :class:`BatchResult`, summed.

    A subclass, so a count added to a batch's result is totalled with no second list of
    fields. Immutable: the relay replaces its ``stats`` after each batch, so the totals
    :meth:`Relay.run` returned stay as they were.
    """

    batches: int = 0

    def add(self, result: BatchResult) -> RelayStats:
        """Return these totals with ``result`` counted in (one more batch)."""
        sums = {f.name: getattr(self, f.name) + getattr(result, f.name) for f in fields(result)}
        return RelayStats(**sums, batches=self.batches + 1)


class Relay:
    """Moves committed outbox messages to a publisher; one per thread or process."""

    def __init__(
        self,
        outbox: Outbox,
        publish: Callable[[Record], Any],
        *,
        owner: str | None = None,
        batch_size: int | None = None,
        rng: random.Random | None = None,
        sleep: Callable[[float], Any] | None = None,
    ) -> None:
        if not callable(publish):
            raise TypeError("publish must be callable")
        self.outbox = outbox
        self.publish = publish
        settings = outbox.settings
        #: Identifies this relay's leases (host, pid and a random part).
        self.owner = owner or f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.batch_size = int(batch_size or settings.batch_size)
        if self.batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.lease = float(settings.lock_seconds)
        self.max_attempts = settings.max_attempts
        self.policy = settings.retry or DEFAULT_RETRY
        self.rng = rng or random.Random()
        self.stats = RelayStats()
        self._stop = threading.Event()
        self._sleep = sleep
        self._last_purge = time.monotonic()

    # ------------------------------------------------------------------ one batch

    def run_once(self) -> BatchResult:
        """Claim one batch, publish it, settle it; return what happened."""
        outbox = self.outbox
        outbox._check_open()
        claimed_at = outbox.clock()
        records, token = outbox._begin_batch(self.owner, self.batch_size, claimed_at, self.lease)
        suspect = next((i for i, record in enumerate(records) if record.abandoned), None)
        if suspect is not None:
            result = self._one_at_a_time(records, suspect)
            outbox._end_batch(token)
            self.stats = self.stats.add(result)
            return result
        sent: list[int] = []
        failed: Counter[Failure] = Counter()
        for index, record in enumerate(records):
            if outbox.clock() >= claimed_at + self.lease:
                # The lease ran out mid-batch: another relay may hold the rest now, so
                # publishing them here would only add duplicates. They stay pending.
                logger.warning(
                    "outbox.%s: lock_seconds ran out after %d of %d messages; the rest "
                    "are left to the next claim (raise lock_seconds or lower batch_size)",
                    outbox.instance,
                    index,
                    len(records),
                )
                break
            if (failure := self._publish_one(record)) is None:
                sent.append(record.row)
            else:
                failed[failure] += 1
        if sent:
            outbox._mark_sent(sent, outbox.clock())
        outbox._end_batch(token)
        result = BatchResult(len(records), len(sent), failed["retried"], failed["dead"])
        self.stats = self.stats.add(result)
        return result

    def _one_at_a_time(self, records: list[Record], suspect: int) -> BatchResult:
        """Settle a batch holding an abandoned row: each message marked once published.

        Rows after the first abandoned one go back untried (so a poison message costs
        them no attempt); the kept rows are published one by one, each marked before the
        next, and an abandoned row past ``max_attempts`` is buried unpublished.
        """
        outbox = self.outbox
        kept, rest = records[: suspect + 1], records[suspect + 1 :]
        released = 0
        for abandoned in (True, False):
            rows = [record.row for record in rest if record.abandoned is abandoned]
            if rows:
                released += outbox._release(rows, self.owner, abandoned=abandoned)
        sent = 0
        failed: Counter[Failure] = Counter()
        for record in kept:
            if record.abandoned and record.attempts > self.max_attempts:
                self._bury_abandoned(record)
                failed["dead"] += 1
                continue
            if (failure := self._publish_one(record)) is None:
                sent += outbox._mark_sent([record.row], outbox.clock())
            else:
                failed[failure] += 1
        return BatchResult(len(kept), sent, failed["retried"], failed["dead"], released)

    def _publish_one(self, record: Record) -> Failure | None:
        """Publish ``record``; on failure retry or bury it and say which (``None``: sent).

        The one rule both batch paths follow: a publish failure is never lost.
        """
        try:
            self.publish(record)
        except Exception as exc:  # any publish failure: retry or bury, never lose
            return "dead" if self._failed(record, exc) else "retried"
        return None

    def _bury_abandoned(self, record: Record) -> None:
        """Move a row whose relays kept stopping on it to the dead list, unpublished."""
        stops = record.attempts - 1
        error = (
            f"RelayStopped: the relay stopped while holding it {stops} times "
            "(killed, crashed, or hung past lock_seconds)"
        )
        now = self.outbox.clock()
        self.outbox._mark_failed(record.row, self.owner, error, now, True, now)
        logger.error(
            "outbox.%s: message %s (topic %s) moved to the dead list: relays stopped while "
            "holding it %d times",
            self.outbox.instance,
            record.row,
            record.topic,
            stops,
        )

    def _failed(self, record: Record, exc: Exception) -> bool:
        """Schedule a retry or bury the message; return True when it went dead."""
        error = redact_string(f"{type(exc).__name__}: {exc}")[:MAX_ERROR_LENGTH]
        now = self.outbox.clock()
        dead = record.attempts >= self.max_attempts
        delay = 0.0 if dead else backoff(record.attempts, self.policy, self.rng)
        self.outbox._mark_failed(record.row, self.owner, error, now + delay, dead, now)
        if dead:
            logger.error(
                "outbox.%s: message %s (topic %s) moved to the dead list after %d attempts (%s)",
                self.outbox.instance,
                record.row,
                record.topic,
                record.attempts,
                type(exc).__name__,
            )
        else:
            logger.warning(
                "outbox.%s: publishing message %s failed (attempt %d, %s); retry in %.1fs",
                self.outbox.instance,
                record.row,
                record.attempts,
                type(exc).__name__,
                delay,
            )
        return dead

    # ------------------------------------------------------------------ the loop

    @property
    def stopping(self) -> bool:
        """Tell whether :meth:`stop` was called (the loop ends after its batch)."""
        return self._stop.is_set()

    def stop(self) -> None:
        """Ask the loop to stop after the batch in flight (thread- and signal-safe)."""
        self._stop.set()

    def run(
        self,
        *,
        once: bool = False,
        stop_when_empty: bool = False,
        max_batches: int | None = None,
        install_signal_handlers: bool = False,
    ) -> RelayStats:
        """Run batches until stopped; return the totals.

        ``once`` runs one batch; ``stop_when_empty`` ends at the first batch that claims
        nothing; ``max_batches`` bounds the count. Between batches that did not fill up,
        the relay waits ``poll_interval`` (woken early by ``notify_channel`` on
        PostgreSQL). With ``install_signal_handlers`` (main thread only), SIGTERM and
        SIGINT stop after the batch in flight and a second one raises ``SystemExit(1)``.
        """
        previous: dict[int, Any] = {}
        if install_signal_handlers and threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGINT):
                previous[signum] = signal.signal(signum, self._on_signal)
        self.outbox._add_relay(self)
        waiter = _Waiter(self)
        try:
            while not self._stop.is_set():
                result = self.run_once()
                if once or (max_batches is not None and self.stats.batches >= max_batches):
                    break
                if stop_when_empty and result.claimed == 0:
                    break
                self._maybe_purge()
                busy = result.claimed + result.released >= self.batch_size
                if not busy and not self._stop.is_set():
                    waiter.wait(self.outbox.settings.poll_interval)
        finally:
            waiter.close()
            self.outbox._remove_relay(self)
            for number, handler in previous.items():
                signal.signal(number, handler)
        return self.stats

    def _maybe_purge(self) -> None:
        if self.outbox.settings.retention <= 0:
            return
        now = time.monotonic()
        if now - self._last_purge < PURGE_EVERY:
            return
        self._last_purge = now
        try:
            deleted = self.outbox.purge()
        except Exception as exc:  # a purge failure must not stop relaying
            logger.warning("outbox.%s: purge failed (%s)", self.outbox.instance, type(exc).__name__)
            return
        if deleted:
            logger.info("outbox.%s: purged %d sent message(s)", self.outbox.instance, deleted)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self._stop.is_set():
            logger.warning("second %s: exiting without finishing the batch", name)
            raise SystemExit(1)
        logger.info("%s: finishing the batch in flight, then stopping", name)
        self.stop()

    def __repr__(self) -> str:
        return f"<Relay outbox.{self.outbox.instance} owner={self.owner!r}>"


class _Waiter:
    """Waits between batches: ``poll_interval``, or until a NOTIFY on ``notify_channel``."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self._listen: Any = None
        outbox = relay.outbox
        channel = outbox.settings.notify_channel
        database = getattr(outbox, "database", None)
        if channel and database is not None and database.dialect == "postgresql":
            try:
                import psycopg

                params = database.django_connection.get_connection_params()
                params.pop("cursor_factory", None)
                params.pop("context", None)
                self._listen = psycopg.connect(**params, autocommit=True)
                self._listen.execute(f'LISTEN "{channel}"')
            except Exception as exc:  # fall back to polling
                logger.warning(
                    "outbox.%s: cannot LISTEN on notify_channel (%s); polling",
                    outbox.instance,
                    type(exc).__name__,
                )
                self.close()

    def wait(self, seconds: float) -> None:
        relay = self.relay
        if relay._sleep is not None:
            relay._sleep(seconds)
            return
        if self._listen is None:
            relay._stop.wait(seconds)
            return
        # Wait in short slices so stop() is honoured within half a second.
        deadline = time.monotonic() + seconds
        try:
            while not relay._stop.is_set():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                for _ in self._listen.notifies(timeout=min(remaining, 0.5), stop_after=1):
                    return
        except Exception:  # a lost listening connection: keep relaying by polling
            self.close()
            relay._stop.wait(max(deadline - time.monotonic(), 0.0))

    def close(self) -> None:
        listen, self._listen = self._listen, None
        if listen is not None:
            try:
                listen.close()
            except Exception:  # closing is best effort
                return
