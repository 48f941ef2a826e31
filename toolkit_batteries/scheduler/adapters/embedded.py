"""The ``embedded`` adapter: a cron loop inside this process, dispatching queue jobs.

How a slot fires (one-minute resolution):

* The loop wakes at every minute boundary (and at least every ``tick`` seconds, so a
  clock jump is noticed), takes the slot of the current minute and fires every entry
  whose cron matches it, **at most once per slot**: each entry remembers the last slot
  it was checked at, and a later check at the same or an earlier slot (a clock set
  back) fires nothing.
* **Missed slots** (the process was suspended, a tick ran long): with the default
  ``missed="latest"`` an entry whose cron matched one or more slots since its last
  check fires **once**, for the latest of them; thousands of missed runs never queue
  up. ``missed="skip"`` drops them: an entry fires only when the current slot matches.
* **A slot fires only while its claim would still be held** (the rule both adapters
  share): when claims are seen by other processes, a slot is fired, on time or late,
  only until ``claim lifetime - skew`` after it (the lifetime is ``claim_ttl`` here and
  ``keep`` on ``sqlserver``, a day by default; ``skew`` is a tenth of it, at most a
  minute, for clocks that disagree between hosts). Any process that fired the slot
  claimed it no earlier than the slot, so its claim is still held then: a process that
  wakes later than that finds no claim it could trust to have survived, and skips the
  slot instead of firing it a second time.
* A loop started mid-minute begins with the next boundary (the current minute may have
  fired already in the process that just stopped). :meth:`run_pending` called on a
  fresh scheduler (``schedule:run --once``, run every minute by system cron) fires the
  entries that match the current minute.
* Cron is evaluated in the scheduler's time zone (``settings.TIME_ZONE`` when Django is
  configured, UTC otherwise) or the entry's own ``tz``; slots are reported in it.
* Time comes from :attr:`EmbeddedScheduler.clock` (an aware ``datetime``), so tests move
  time instead of waiting for it.

Across processes, each (schedule, slot) is **claimed** before it is dispatched: a
non-blocking :meth:`~toolkit_batteries.lock.base.Lock.acquire` of
``scheduler:<instance>:<schedule>:<slot, UTC>`` (say
``scheduler:default:digest:2025-01-06T08:00Z``) on the scheduler's lock, held for
``claim_ttl`` (a day; 2 minutes on the per-process ``memory`` lock, whose claims no
other process reads and whose table a day of claims would fill) and never released,
so a second process that looks at the same slot, even late, finds it taken and skips
it (a debug line; it counts in :attr:`EmbeddedScheduler.claimed_elsewhere`).
:meth:`EmbeddedScheduler.open` takes ``container.lock(<scheduler instance>)`` when that
lock instance is configured, else ``container.lock("default")``. With the ``memory``
lock adapter (the default) claims are per process, as the slot memory above; with
``kvserver`` every process sharing the server and prefix dispatches each slot once. A
claim that fails (the lock server is unreachable) dispatches nothing and is reported as
a failed :class:`Fired`.

A dispatch that fails (an unknown job, an unreachable queue) is logged and reported in
its :class:`~toolkit_batteries.scheduler.base.Fired` record; the loop goes on.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from toolkit_batteries.core.adapter import ClosedResource, OpenContext
from toolkit_batteries.core.errors import (
    MissingExtraError,
    ServiceUnavailableError,
)
from toolkit_batteries.core.redaction import redact_string

from ..base import Fired, InvalidScheduleError, Schedule, Scheduler, job_name

with MissingExtraError.guard("scheduler", "embedded", "scheduler", "croniter"):
    from croniter import CroniterBadDateError, croniter

__all__ = [
    "DEFAULT_CLAIM_TTL",
    "DEFAULT_TICK",
    "LAST_FIRE_PROBES",
    "LOCAL_CLAIM_TTL",
    "ContainerDispatcher",
    "EmbeddedScheduler",
    "claim_key",
    "floor_minute",
]

logger = logging.getLogger("toolkit.scheduler")

#: Longest sleep of the loop between two looks at the clock, in seconds.
DEFAULT_TICK = 1.0
#: How long a slot's claim is held on a shared lock, in seconds (a day, as long as the
#: ``sqlserver`` adapter keeps its rows): a late process (a pause, a clock behind) still
#: finds the slot taken, and catch-up never reaches back further than this.
DEFAULT_CLAIM_TTL = 86_400.0
#: The claim lifetime on the per-process ``memory`` lock: only this process reads those
#: claims (its slot memory guards it anyway), and its table is bounded.
LOCAL_CLAIM_TTL = 120.0
#: Most clock skew between hosts a catch-up leaves to spare, in seconds.
MAX_CLOCK_SKEW = 60.0
#: Most slots :meth:`EmbeddedScheduler.last_fires` probes per schedule (four hours of a
#: per-minute cron): a scrape stays a few hundred lock reads at worst.
LAST_FIRE_PROBES = 240
_ONE_SECOND = timedelta(seconds=1)

Missed = Literal["latest", "skip"]


def floor_minute(moment: datetime) -> datetime:
    """Return the start (UTC) of the minute holding the aware datetime ``moment``."""
    if moment.tzinfo is None:
        raise ValueError("the scheduler needs timezone-aware datetimes")
    return moment.astimezone(UTC).replace(second=0, microsecond=0)


def claim_key(instance: str, name: str, slot: datetime) -> str:
    """Return the lock name claiming ``slot`` of schedule ``name`` for scheduler ``instance``."""
    return f"scheduler:{instance}:{name}:{floor_minute(slot).strftime('%Y-%m-%dT%H:%MZ')}"


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _zone(name: str | tzinfo | None, *, where: str) -> tzinfo:
    if name is None or name == "":
        return UTC
    if isinstance(name, tzinfo):
        return name
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidScheduleError(f"{where}: unknown time zone {name!r}") from None


@dataclass
class _Entry:
    schedule: Schedule
    zone: tzinfo
    #: The last slot (UTC) this entry was checked at; ``None`` before the first check.
    since: datetime | None = None

    def local(self, slot: datetime) -> datetime:
        return slot.astimezone(self.zone)

    def matches(self, slot: datetime) -> bool:
        return bool(croniter.match(self.schedule.cron, self.local(slot)))

    def latest(self, slot: datetime) -> datetime | None:
        """Return the last fire time at or before ``slot`` (UTC), or ``None``."""
        try:
            found = croniter(self.schedule.cron, self.local(slot) + _ONE_SECOND).get_prev(datetime)
        except CroniterBadDateError:
            return None
        return found.astimezone(UTC)


class EmbeddedScheduler(Scheduler):
    """Cron entries evaluated in this process; due ones go to the job dispatcher."""

    adapter_name = "embedded"

    def __init__(
        self,
        *,
        dispatcher: Any = None,
        timezone: str | tzinfo | None = None,
        clock: Callable[[], datetime] = _utc_now,
        tick: float = DEFAULT_TICK,
        missed: Missed = "latest",
        close_timeout: float = 5.0,
        on_fire: Callable[[Fired], None] | None = None,
        instance: str = "default",
        lock: Any = None,
        claim_ttl: float | None = None,
    ) -> None:
        """Create an empty scheduler.

        ``dispatcher`` is an object with ``dispatch(job, args, kwargs)`` (the queue jobs'
        :class:`~toolkit_batteries.queue.jobs.Dispatcher`); ``None`` uses the process's
        dispatcher at each fire. ``on_fire`` is called with every :class:`Fired` record
        of the loop. ``lock`` (a :class:`~toolkit_batteries.lock.base.Lock`) claims each
        (schedule, slot) for ``claim_ttl`` seconds before it is dispatched (default
        :data:`DEFAULT_CLAIM_TTL`, :data:`LOCAL_CLAIM_TTL` on a ``memory`` lock); ``None``
        claims nothing (the slot memory of this object is then the only guard).
        """
        if missed not in ("latest", "skip"):
            raise ValueError('missed must be "latest" or "skip"')
        if tick <= 0:
            raise ValueError("tick must be positive")
        if claim_ttl is None:
            claim_ttl = LOCAL_CLAIM_TTL if _process_local(lock) else DEFAULT_CLAIM_TTL
        if claim_ttl <= 0:
            raise ValueError("claim_ttl must be positive")
        self.instance = instance
        self.dispatcher = dispatcher
        #: Called with this scheduler when ``dispatcher`` is ``None`` at a fire; returns
        #: the dispatcher to keep (``services.scheduler()`` sets a ContainerDispatcher).
        self.resolve_dispatcher: Callable[[Any], Any] | None = None
        self.timezone = _zone(timezone, where=f"scheduler.{instance}")
        #: Returns the current time (aware); replace it in tests.
        self.clock = clock
        self.tick = float(tick)
        self.missed: Missed = missed
        self.close_timeout = close_timeout
        self.on_fire = on_fire
        #: The lock slots are claimed on (``None``: no claims).
        self.lock = lock
        self.claim_ttl = float(claim_ttl)
        #: Due (schedule, slot) pairs skipped because another process claimed them first.
        self.claimed_elsewhere = 0
        #: Missed slots skipped because they were older than a claim lives (see
        #: :meth:`catch_up_limit`): another process may have fired them.
        self.skipped_too_late = 0
        self._counter = threading.Lock()
        self._resolving = threading.Lock()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        #: Schedule name -> the slot (UTC) this object last dispatched it for.
        self._fired: dict[str, datetime] = {}
        self._lock: Any = threading.RLock()
        self._stopping = threading.Event()
        self._running = False
        self._thread: threading.Thread | None = None

    @classmethod
    def open(cls, ctx: OpenContext) -> EmbeddedScheduler:
        """Open an empty scheduler in the project's time zone, claiming slots on a lock.

        The lock is ``container.lock(<this instance>)`` when the ``lock`` service
        configures an instance of that name, else ``container.lock("default")``; it opens
        first and so closes after the scheduler. The job dispatcher comes from the same
        container, at the first fire (:class:`ContainerDispatcher`).
        """
        timeout = ctx.options.close_timeout
        lock = ctx.sibling("lock", "slots are claimed on lock.{name}, which does not open: {exc}")
        scheduler = cls(
            timezone=_settings_time_zone(),
            close_timeout=timeout.total_seconds() if timeout else 5.0,
            instance=ctx.instance,
            lock=lock,
        )
        scheduler.resolve_dispatcher = ContainerDispatcher(ctx.container)
        return scheduler

    # ------------------------------------------------------------------ entries

    def add(self, schedule: Schedule, *, replace: bool = False) -> None:
        """Register ``schedule`` after checking its cron and time zone."""
        if not isinstance(schedule, Schedule):
            raise TypeError("add() takes a Schedule")
        where = f'schedule "{schedule.name}"'
        zone = _zone(schedule.tz, where=where) if schedule.tz else self.timezone
        if not croniter.is_valid(schedule.cron):
            raise InvalidScheduleError(f"{where}: invalid cron expression {schedule.cron!r}")
        entry = _Entry(schedule, zone)
        try:
            croniter(schedule.cron, entry.local(floor_minute(_utc_now()))).get_next(datetime)
        except CroniterBadDateError:
            raise InvalidScheduleError(
                f"{where}: cron {schedule.cron!r} never matches a date"
            ) from None
        with self._lock:
            if schedule.name in self._entries and not replace:
                raise InvalidScheduleError(f"{where} is already registered")
            if self._running:
                entry.since = floor_minute(self.clock())
            self._entries[schedule.name] = entry

    def remove(self, name: str) -> bool:
        with self._lock:
            return self._entries.pop(name, None) is not None

    def entries(self) -> list[Schedule]:
        """Return the registered schedules, in registration order."""
        with self._lock:
            return [entry.schedule for entry in self._entries.values()]

    def zone_of(self, name: str) -> tzinfo:
        with self._lock:
            return self._entry(name).zone

    def next_run(self, name: str, after: datetime | None = None) -> datetime:
        """Return the first slot of ``name`` strictly after ``after``, in its time zone."""
        with self._lock:
            entry = self._entry(name)
        start = entry.local(after if after is not None else self.clock())
        return croniter(entry.schedule.cron, start).get_next(datetime)

    def _entry(self, name: str) -> _Entry:
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(f'no schedule named "{name}"') from None

    # ------------------------------------------------------------------ firing

    def claim_lifetime(self) -> float | None:
        """Return the seconds a claim stays visible to other processes, ``None`` if it never is.

        ``claim_ttl`` on a shared lock; ``None`` without a lock or on the per-process
        ``memory`` lock (no other process can have fired the slot).
        """
        if self.lock is None or _process_local(self.lock):
            return None
        return self.claim_ttl

    def catch_up_limit(self) -> float | None:
        """Return how many seconds after a slot it may still fire; ``None``: no limit.

        The claim lifetime less the clock skew allowed between hosts (a tenth of it, at
        most :data:`MAX_CLOCK_SKEW`): any process that fired the slot claimed it at or
        after the slot, so up to this limit its claim is still held and is seen.
        """
        lifetime = self.claim_lifetime()
        if lifetime is None:
            return None
        return lifetime - min(MAX_CLOCK_SKEW, lifetime / 10)

    def _due_slot(self, entry: _Entry, slot: datetime) -> datetime | None:
        """Return the slot ``entry`` fires for at ``slot`` (a missed one, maybe), or None."""
        since = entry.since
        if since is not None and slot <= since:
            return None
        if since is None or self.missed == "skip":
            return slot if entry.matches(slot) else None
        latest = entry.latest(slot)
        return latest if latest is not None and latest > since else None

    def _too_late(self, fires_for: datetime, now: datetime, limit: float | None) -> bool:
        """Tell whether ``fires_for`` is older than a claim lives, so it must not fire."""
        return limit is not None and (now - fires_for).total_seconds() >= limit

    def due(self, now: datetime | None = None) -> list[Schedule]:
        """Return the entries :meth:`run_pending` would fire at ``now``; change nothing."""
        moment = now if now is not None else self.clock()
        slot, limit = floor_minute(moment), self.catch_up_limit()
        with self._lock:
            found = []
            for entry in self._entries.values():
                fires_for = self._due_slot(entry, slot)
                if fires_for is not None and not self._too_late(fires_for, moment, limit):
                    found.append(entry.schedule)
            return found

    def run_pending(self, now: datetime | None = None) -> list[Fired]:
        """Fire every entry due at ``now`` (default: the clock) once; return the records.

        A due entry whose slot another process already claimed is skipped: it has no
        record and counts in :attr:`claimed_elsewhere`. A missed slot older than a claim
        lives (:meth:`catch_up_limit`) is skipped too (:attr:`skipped_too_late`).
        """
        moment = now if now is not None else self.clock()
        slot, limit = floor_minute(moment), self.catch_up_limit()
        with self._lock:
            due: list[tuple[_Entry, datetime]] = []
            for entry in self._entries.values():
                fires_for = self._due_slot(entry, slot)
                if fires_for is not None and self._too_late(fires_for, moment, limit):
                    logger.warning(
                        "scheduler: %s: slot %s is older than a claim lives (%.0f s), skipped: "
                        "another process may have fired it",
                        entry.schedule.name,
                        fires_for.isoformat(),
                        limit,
                    )
                    with self._counter:
                        self.skipped_too_late += 1
                elif fires_for is not None:
                    due.append((entry, fires_for))
                if entry.since is None or slot > entry.since:
                    entry.since = slot
        fired = (self._fire(entry, fires_for) for entry, fires_for in due)
        return [record for record in fired if record is not None]

    def _claim(self, name: str, slot: datetime) -> bool:
        """Claim ``slot`` of ``name`` on the lock; tell whether this process may fire it.

        The lease is never released: it must outlive the slot so that a late process
        skips it too, and expires after ``claim_ttl``.
        """
        if self.lock is None:
            return True
        key = claim_key(self.instance, name, slot)
        if self.lock.acquire(key, ttl=self.claim_ttl) is not None:
            return True
        logger.debug("scheduler: %s: slot %s claimed elsewhere, skipped", name, key)
        with self._counter:
            self.claimed_elsewhere += 1
        return False

    def _fire(self, entry: _Entry, slot: datetime) -> Fired | None:
        schedule = entry.schedule
        when = entry.local(slot)
        step = "claim"
        try:
            if not self._claim(schedule.name, slot):
                return None
            step = "dispatch"
            from ..discovery import resolve_job

            job = resolve_job(schedule.job)
            ident = self._dispatcher().dispatch(job, schedule.args, schedule.kwargs)
        except Exception as exc:  # one failing entry must not stop the others
            reason = f"{type(exc).__name__}: {redact_string(str(exc))}"
            logger.error("scheduler: %s: %s failed: %s", schedule.name, step, reason)
            unreachable = isinstance(exc, ServiceUnavailableError)
            return Fired(
                schedule.name, schedule.job_name, when, error=reason, unreachable=unreachable
            )
        logger.info("scheduler: %s: dispatched %s (id %s)", schedule.name, job_name(job), ident)
        with self._counter:
            if slot > self._fired.get(schedule.name, slot - _ONE_SECOND):
                self._fired[schedule.name] = slot
        return Fired(schedule.name, job_name(job), when, id=str(ident))

    def _dispatcher(self) -> Any:
        """Return the injected dispatcher, else the opening container's, else the process's."""
        if self.dispatcher is not None:
            return self.dispatcher
        resolve = self.resolve_dispatcher
        if resolve is not None:
            with self._resolving:
                if self.dispatcher is None:
                    found = resolve(self)  # raises when the queue does not open: retried
                    if found is None:
                        self.resolve_dispatcher = None  # celery: the process's, each time
                    self.dispatcher = found
            if self.dispatcher is not None:
                return self.dispatcher
        from toolkit_batteries.queue.jobs import dispatcher

        return dispatcher()

    # ------------------------------------------------------------------ metrics

    def last_fires(
        self, schedules: Iterable[Schedule] | None = None, now: datetime | None = None
    ) -> dict[str, datetime]:
        """Return schedule name -> the newest slot (UTC) it fired for; unknown ones left out.

        Why: ``/metrics`` runs in a web process while ``schedule:run`` fires in another,
        and what they share is the lock the slots are claimed on, whose claims keep no
        time but name their slot. So a slot counts as fired when its claim is held: the
        walk goes back from the slot of ``now`` through each schedule's cron, at most
        :data:`LAST_FIRE_PROBES` slots and never further than a claim lives. The slots
        this object dispatched itself count too (the only source without a lock).
        ``schedules`` defaults to the registered entries (a web process has none: pass
        the discovered ones).
        """
        moment = now if now is not None else self.clock()
        with self._lock:
            if schedules is None:
                entries = list(self._entries.values())
            else:
                entries = [
                    _Entry(item, _zone(item.tz, where=item.name) if item.tz else self.timezone)
                    for item in schedules
                ]
        with self._counter:
            found = {
                e.schedule.name: self._fired[e.schedule.name]
                for e in entries
                if e.schedule.name in self._fired
            }
        if self.lock is None:
            return found
        oldest = moment - timedelta(seconds=self.claim_ttl)
        for entry in entries:
            name = entry.schedule.name
            claimed = self._newest_claim(entry, floor_minute(moment), oldest)
            if claimed is not None and claimed > found.get(name, claimed - _ONE_SECOND):
                found[name] = claimed
        return found

    def _newest_claim(self, entry: _Entry, slot: datetime, oldest: datetime) -> datetime | None:
        """Return the newest slot of ``entry`` at or before ``slot`` whose claim is held."""
        try:
            walk = croniter(entry.schedule.cron, entry.local(slot) + _ONE_SECOND)
            for _ in range(LAST_FIRE_PROBES):
                candidate = walk.get_prev(datetime).astimezone(UTC)
                if candidate < oldest:
                    return None
                if self.lock.locked(claim_key(self.instance, entry.schedule.name, candidate)):
                    return candidate
        except CroniterBadDateError:
            return None
        return None

    # ------------------------------------------------------------------ the loop

    @property
    def running(self) -> bool:
        """Tell whether the loop is running."""
        return self._running

    def run(self) -> None:
        """Run the loop in this thread until :meth:`stop` (from a signal or a thread).

        A :meth:`stop` that comes before the loop starts (a signal during start-up)
        still ends it at once.
        """
        lock = self._lock  # close() may swap it while the loop winds down
        with lock:
            if self._running:
                raise RuntimeError("the scheduler loop is already running")
            self._running = True
            start = floor_minute(self.clock())
            for entry in self._entries.values():
                if entry.since is None:
                    entry.since = start
        try:
            while not self._stopping.is_set():
                try:
                    fired = self.run_pending()
                except Exception:  # keep the loop alive; the next tick tries again
                    logger.exception("scheduler: tick failed")
                    fired = []
                for record in fired:
                    if self.on_fire is not None:
                        self.on_fire(record)
                self._stopping.wait(self._pause())
        finally:
            with lock:
                self._running = False
            self._stopping.clear()  # a later run() or start() begins afresh

    def _pause(self) -> float:
        """Sleep until just after the next minute boundary, at most ``tick`` seconds."""
        now = self.clock()
        boundary = floor_minute(now) + timedelta(minutes=1)
        until = (boundary - now.astimezone(UTC)).total_seconds() + 0.001
        return max(0.001, min(self.tick, until))

    def start(self) -> None:
        """Run the loop on a daemon thread; :meth:`stop` or :meth:`close` ends it."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self.run, name=f"toolkit-scheduler.{self.instance}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Ask the loop to stop; wait for the background thread up to ``timeout`` seconds."""
        self._stopping.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(self.close_timeout if timeout is None else timeout)
            if not thread.is_alive():
                self._thread = None

    def close(self) -> None:
        """Stop the loop and forget the entries; later calls raise ServiceUnavailableError."""
        if isinstance(self._lock, ClosedResource):
            return
        self.stop()
        with self._lock:
            self._entries.clear()
        self._lock = ClosedResource(self.service_name, self.instance)

    def __repr__(self) -> str:
        return f"<EmbeddedScheduler scheduler.{self.instance}, {len(self._entries)} entries>"


class ContainerDispatcher:
    """Resolve a scheduler's job dispatcher from the container that opened it, on first use.

    With the ``queue`` dispatcher (``TOOLKIT_JOBS``, the default), jobs go to the queue of
    *that* container (``container.queue(<queue_instance>)``), never to the global
    registry's: a script's or a test's ``Container`` keeps its dispatches to itself. The
    queue opens at the first fire, not with the scheduler, so ``schedule:run --list``
    needs no queue and an unreachable queue is a failed dispatch (``Fired``), as before.
    The dispatcher, then the scheduler, are registered as the queue's dependants, so
    closing the container follows the spec's order whatever opened first: scheduler, job
    dispatcher, queue. With the ``celery`` dispatcher there is no container queue: the
    call returns ``None`` and the scheduler uses the process's Celery dispatcher.
    """

    __slots__ = ("container",)

    def __init__(self, container: Any) -> None:
        self.container = container

    def __call__(self, scheduler: Any) -> Any:
        """Return the dispatcher for ``scheduler`` (opening the queue), or ``None``."""
        from toolkit_batteries.queue.jobs import QueueDispatcher, jobs_settings

        queue_instance = "default"
        if _django_configured():
            conf = jobs_settings()
            if conf.dispatcher != "queue":
                return None
            queue_instance = conf.queue_instance
        queue = self.container.queue(queue_instance)
        found = QueueDispatcher(queue)
        queue.add_dependant(found)
        queue.add_dependant(scheduler)  # dependants close last-registered first
        return found


def _process_local(lock: Any) -> bool:
    """Tell whether ``lock`` keeps its leases in this process only (the ``memory`` adapter)."""
    return getattr(lock, "adapter_name", "") == "memory"


def _django_configured() -> bool:
    """Tell whether Django settings are configured (a script's container may lack them)."""
    from django.conf import settings

    return settings.configured


def _settings_time_zone() -> str | None:
    """Return ``settings.TIME_ZONE`` when Django is configured, else ``None`` (UTC)."""
    try:
        from django.conf import settings
    except ImportError:  # pragma: no cover - Django is a dependency
        return None
    if not settings.configured:
        return None
    return getattr(settings, "TIME_ZONE", None) or None
