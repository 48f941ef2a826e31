"""The scheduler service: cron entries that dispatch queue jobs, and its interface.

::

    from toolkit_batteries.scheduler import Schedule

    # <app>/schedules.py (discovered in every installed app)
    SCHEDULES = [
        Schedule("nightly-report", "0 2 * * *", "reports.jobs.build_report"),
        Schedule("sweep", "*/15 * * * *", sweep_job, args=("tmp",)),
    ]

    # python manage.py schedule_run          (or: toolkit schedule:run)

A schedule never runs code itself: when its cron slot comes, the scheduler *dispatches*
its job through the job dispatcher (``toolkit_batteries.queue.jobs``), and a queue
worker runs it. The dispatcher is injected in code (the spec's rule), never configured,
which is why a settings ``options`` block for ``scheduler`` fails with
``dispatcher_is_required``.

Cron expressions have five fields (minute, hour, day of month, month, day of week) or
are one of ``@yearly``, ``@annually``, ``@monthly``, ``@weekly``, ``@daily``,
``@midnight``, ``@hourly``: the scheduler's resolution is one minute.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service

from .errors import InvalidScheduleError

__all__ = ["Fired", "InvalidScheduleError", "Schedule", "Scheduler", "job_name"]

_NAME = re.compile(r"^[A-Za-z0-9_.:\-]{1,100}$")
#: The ``@`` shorthands of five-field cron (``@reboot`` has no meaning here).
ALIASES = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")


def job_name(job: Any) -> str:
    """Return the registered name of ``job`` (a queue-jobs ``Job``) or ``job`` itself."""
    name = getattr(job, "name", job)
    return name if isinstance(name, str) else repr(job)


@dataclass(frozen=True)
class Schedule:
    """One cron entry: at every slot ``cron`` matches, dispatch ``job(*args, **kwargs)``.

    ``job`` is a job from ``@job`` or its registered (dotted) name, resolved when it
    fires. ``tz`` (an IANA name) overrides the scheduler's time zone for this entry.
    The cron text is checked for shape here and parsed by the adapter.
    """

    name: str
    cron: str
    job: Any
    args: Sequence[Any] = ()
    kwargs: Mapping[str, Any] | None = None
    tz: str | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise InvalidScheduleError(
                f'schedule name {self.name!r}: use 1 to 100 letters, digits, ".", "_", ":" or "-"'
            )
        if not isinstance(self.cron, str) or not self.cron.strip():
            raise InvalidScheduleError(f'schedule "{self.name}": cron must be a non-empty string')
        text = " ".join(self.cron.split())
        if text.startswith("@"):
            if text.lower() not in ALIASES:
                raise InvalidScheduleError(
                    f'schedule "{self.name}": unknown cron shorthand {text!r} '
                    f"(want one of {', '.join(ALIASES)})"
                )
        elif len(text.split(" ")) != 5:
            raise InvalidScheduleError(
                f'schedule "{self.name}": cron {text!r} must have five fields '
                "(minute hour day-of-month month day-of-week)"
            )
        object.__setattr__(self, "cron", text)
        if not (isinstance(self.job, str) and self.job.strip()) and not hasattr(self.job, "name"):
            raise InvalidScheduleError(
                f'schedule "{self.name}": job must be a job from @job or its registered name'
            )
        if isinstance(self.args, str | bytes) or not isinstance(self.args, Sequence):
            raise InvalidScheduleError(f'schedule "{self.name}": args must be a list or tuple')
        object.__setattr__(self, "args", tuple(self.args))
        if self.kwargs is not None and not isinstance(self.kwargs, Mapping):
            raise InvalidScheduleError(f'schedule "{self.name}": kwargs must be a dict')
        object.__setattr__(self, "kwargs", dict(self.kwargs or {}))

    @property
    def job_name(self) -> str:
        """Return the name of the job this entry dispatches."""
        return job_name(self.job)


@dataclass(frozen=True)
class Fired:
    """One dispatch the scheduler made (or tried to make) for one slot."""

    #: The schedule's name.
    name: str
    #: The job's name.
    job: str
    #: The cron slot this dispatch is for (timezone-aware).
    slot: datetime
    #: The message (or task) id the dispatcher returned, ``None`` when it failed.
    id: str | None = None
    #: ``"<ExceptionType>: <message>"`` when the dispatch failed.
    error: str | None = None
    #: Whether it failed because the queue's server could not be reached.
    unreachable: bool = False

    @property
    def ok(self) -> bool:
        """Tell whether the dispatch succeeded."""
        return self.error is None

    def as_dict(self) -> dict[str, Any]:
        """Return the record as JSON-ready data."""
        out: dict[str, Any] = {"name": self.name, "job": self.job, "slot": self.slot.isoformat()}
        if self.id is not None:
            out["id"] = self.id
        if self.error is not None:
            out["error"] = self.error
        return out


class Scheduler(Service):
    """Base of the scheduler adapters.

    ``due(now)`` answers which entries a slot fires and changes nothing;
    ``run_pending(now)`` fires them (each entry at most once per slot) and returns what it
    dispatched. ``run()`` is the blocking loop, ``start()`` the same loop on a thread;
    ``stop()`` ends either after the tick in progress; ``close()`` stops and refuses
    further use.
    """

    service_name: ClassVar[str] = "scheduler"
    #: The zone cron expressions are read in (entries may name their own).
    timezone: tzinfo = UTC

    def zone_of(self, name: str) -> tzinfo:
        """Return the time zone the entry ``name`` is evaluated in."""
        return self.timezone

    def add(self, schedule: Schedule, *, replace: bool = False) -> None:
        """Register ``schedule``; a taken name raises unless ``replace``."""
        raise NotImplementedError

    def remove(self, name: str) -> bool:
        """Forget the entry ``name``; tell whether there was one."""
        raise NotImplementedError

    def entries(self) -> list[Schedule]:
        """Return the registered entries, in registration order."""
        raise NotImplementedError

    def next_run(self, name: str, after: datetime | None = None) -> datetime:
        """Return the first slot of ``name`` strictly after ``after`` (default: now)."""
        raise NotImplementedError

    def due(self, now: datetime | None = None) -> list[Schedule]:
        """Return the entries that :meth:`run_pending` would fire at ``now``."""
        raise NotImplementedError

    def run_pending(self, now: datetime | None = None) -> list[Fired]:
        """Dispatch every due entry once for the slot of ``now``; return the dispatches."""
        raise NotImplementedError

    def run(self) -> None:
        """Run the loop in this thread until :meth:`stop`."""
        raise NotImplementedError

    def start(self) -> None:
        """Run the loop on a background thread."""
        raise NotImplementedError

    def stop(self, timeout: float | None = None) -> None:
        """Stop the loop after the tick in progress (waiting up to ``timeout`` seconds)."""
        raise NotImplementedError

    def __contains__(self, name: object) -> bool:
        return any(entry.name == name for entry in self.entries())

    def __len__(self) -> int:
        return len(self.entries())

    def __bool__(self) -> bool:
        return True
