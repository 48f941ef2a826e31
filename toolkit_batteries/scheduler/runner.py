"""What ``manage.py schedule_run`` and ``toolkit schedule:run`` both do.

:func:`execute` loads the project's scheduler (``services.scheduler()`` plus every
discovered schedule, after importing the job modules so each schedule's job resolves),
then lists the entries, fires the current minute once, or runs the loop until SIGTERM
or SIGINT. It writes human lines through the ``say`` callable and returns the data the
CLI's ``--json`` envelope carries; failures raise :class:`RunError` with the CLI
contract's exit code (3 invalid configuration or schedule, 5 queue unreachable).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from .base import Fired

__all__ = ["EXIT_INVALID", "EXIT_RUNTIME", "EXIT_UNREACHABLE", "RunError", "execute"]

EXIT_RUNTIME = 1
EXIT_INVALID = 3
EXIT_UNREACHABLE = 5

Say = Callable[[str], None]


class RunError(Exception):
    """The command failed; ``exit_code`` follows the CLI contract."""

    def __init__(self, message: str, exit_code: int = EXIT_RUNTIME, data: Any = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        #: What the ``--json`` envelope carries (the dispatches of a failed ``--once``).
        self.data = data


def load_scheduler(instance: str = "default") -> Any:
    """Return ``services.scheduler(instance)`` holding every discovered schedule."""
    from toolkit_batteries import services
    from toolkit_batteries.core.errors import ConfigurationError, ServiceUnavailableError
    from toolkit_batteries.queue.jobs import UnknownJobError, import_job_modules

    from .base import InvalidScheduleError
    from .discovery import discover_schedules, resolve_job

    try:
        import_job_modules()
        scheduler = services.scheduler(instance)
        for schedule in discover_schedules():
            if schedule.name not in scheduler:
                scheduler.add(schedule)
        for schedule in scheduler.entries():
            resolve_job(schedule.job)
    except (ConfigurationError, InvalidScheduleError) as exc:
        raise RunError(str(exc), EXIT_INVALID) from None
    except UnknownJobError as exc:
        raise RunError(f"a schedule names an unknown job: {exc}", EXIT_INVALID) from None
    except ServiceUnavailableError as exc:
        raise RunError(str(exc), EXIT_UNREACHABLE) from None
    return scheduler


def describe(scheduler: Any, now: datetime | None = None) -> dict[str, Any]:
    """Return every entry with its next run, as ``--list`` shows it."""
    clock = getattr(scheduler, "clock", None)
    now = now or (clock() if clock is not None else datetime.now(UTC))
    rows = []
    for schedule in scheduler.entries():
        rows.append(
            {
                "name": schedule.name,
                "cron": schedule.cron,
                "job": schedule.job_name,
                "args": list(schedule.args),
                "kwargs": dict(schedule.kwargs or {}),
                "timezone": str(scheduler.zone_of(schedule.name)),
                "next_run": scheduler.next_run(schedule.name, now).isoformat(),
            }
        )
    return {"timezone": str(scheduler.timezone), "now": now.isoformat(), "schedules": rows}


def _table(rows: list[dict[str, Any]]) -> list[str]:
    header = ("NAME", "CRON", "JOB", "NEXT RUN")
    cells = [(r["name"], r["cron"], r["job"], r["next_run"]) for r in rows]
    widths = [max(len(row[i]) for row in [header, *cells]) for i in range(3)]
    return [
        "  ".join(value.ljust(widths[i]) if i < 3 else value for i, value in enumerate(row))
        for row in [header, *cells]
    ]


def _line(record: Fired) -> str:
    if record.ok:
        return f"{record.slot.isoformat()} {record.name}: dispatched {record.job} (id {record.id})"
    return (
        f"{record.slot.isoformat()} {record.name}: dispatch of {record.job} failed: {record.error}"
    )


def _claimed_elsewhere(scheduler: Any) -> int:
    return int(getattr(scheduler, "claimed_elsewhere", 0) or 0)


def _claims(scheduler: Any) -> str:
    """Describe where the scheduler claims its slots (for the loop's start line)."""
    described = getattr(scheduler, "describe_claims", None)
    if callable(described):
        return str(described())
    lock = getattr(scheduler, "lock", None)
    if lock is None:
        return "slots claimed by this process only"
    name = getattr(lock, "adapter_name", "") or type(lock).__name__
    return f"slots claimed on lock.{getattr(lock, 'instance', 'default')} ({name})"


def run_once(scheduler: Any, say: Say, now: datetime | None = None) -> dict[str, Any]:
    """Fire the entries due in the current minute; fail when a dispatch failed."""
    before = _claimed_elsewhere(scheduler)
    fired = scheduler.run_pending(now)
    skipped = _claimed_elsewhere(scheduler) - before
    for record in fired:
        say(_line(record))
    failed = [r for r in fired if not r.ok]
    if skipped:
        say(f"{skipped} due schedule(s) already claimed by another process")
    elif not fired:
        say("no schedule is due this minute")
    data = {
        "dispatched": [r.as_dict() for r in fired if r.ok],
        "failed": [r.as_dict() for r in failed],
        "claimed_elsewhere": skipped,
    }
    if failed:
        code = EXIT_UNREACHABLE if any(r.unreachable for r in failed) else EXIT_RUNTIME
        raise RunError(f"{len(failed)} of {len(fired)} dispatch(es) failed", code, data)
    return data


def run_loop(scheduler: Any, say: Say, *, tick: float | None = None) -> dict[str, Any]:
    """Run the loop until SIGTERM or SIGINT; return the dispatch counts."""
    counts = {"dispatched": 0, "failed": 0, "claimed_elsewhere": 0}
    before = _claimed_elsewhere(scheduler)

    def on_fire(record: Fired) -> None:
        counts["dispatched" if record.ok else "failed"] += 1
        say(_line(record))

    def on_signal(signum: int, frame: Any) -> None:
        scheduler.stop(timeout=0)

    # The loop's knobs are the embedded adapter's; restore them for the next caller.
    previous_tick = getattr(scheduler, "tick", None)
    previous_hook = getattr(scheduler, "on_fire", None)
    if tick is not None:
        scheduler.tick = tick
    scheduler.on_fire = on_fire
    handlers: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        handlers = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    say(
        f"schedule_run: {scheduler.adapter_name} scheduler.{scheduler.instance}, "
        f"{len(scheduler.entries())} schedule(s), time zone {scheduler.timezone}, "
        f"{_claims(scheduler)} (pid {os.getpid()}); SIGTERM or Ctrl-C stops it"
    )
    try:
        scheduler.run()
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        scheduler.tick, scheduler.on_fire = previous_tick, previous_hook
        counts["claimed_elsewhere"] = _claimed_elsewhere(scheduler) - before
    say(
        f"schedule_run: stopped after {counts['dispatched']} dispatch(es), "
        f"{counts['failed']} failed, {counts['claimed_elsewhere']} claimed elsewhere"
    )
    return counts


def execute(
    say: Say,
    *,
    list_only: bool = False,
    once: bool = False,
    tick: float | None = None,
    instance: str = "default",
) -> dict[str, Any]:
    """Run the command: ``--list``, ``--once`` or the loop; return the envelope data."""
    if tick is not None and tick <= 0:
        raise RunError("--tick must be a positive number of seconds", 2)
    scheduler = load_scheduler(instance)
    if list_only:
        data = describe(scheduler)
        if data["schedules"]:
            for line in _table(data["schedules"]):
                say(line)
        else:
            say("no schedules: define SCHEDULES = [Schedule(...)] in <app>/schedules.py")
        return data
    if once:
        return run_once(scheduler, say)
    return run_loop(scheduler, say, tick=tick)
