"""Workflow definitions: plain Python objects naming steps and their callables.

A definition is data, so the schema compiler's ``saga`` can generate one as readily as a
person writes it::

    from toolkit_batteries.workflow import Step, WorkflowDefinition, register

    register(WorkflowDefinition(
        "order",
        steps=[
            Step("reserve", execute="shop.saga.reserve", compensate="shop.saga.release"),
            Step("charge", execute="shop.saga.charge", compensate="shop.saga.refund", pivot=True),
            Step("approve", wait_for="approved"),
            Step("ship", execute="shop.saga.ship", retry={"max_attempts": 5}),
        ],
    ))

``execute`` and ``compensate`` are callables, dotted paths (imported on first use, so a
definition module imports nothing heavy) or names registered with :func:`step_function`.
Each is called with one :class:`StepContext`; ``execute`` returns a JSON value, the
step's recorded result. Definitions live in the process registry (:func:`register`);
workers find them by name, importing every installed app's ``workflows`` module first.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolkit_batteries.core.groups import ResilienceRetryPolicy, RetryPolicy

__all__ = [
    "DefinitionError",
    "Step",
    "StepContext",
    "UnknownWorkflowError",
    "WorkflowDefinition",
    "definition",
    "definitions",
    "register",
    "resolve_callable",
    "step_function",
]

_NAME = re.compile(r"^[A-Za-z0-9_.:\-]{1,100}$")
_QUEUE = re.compile(r"^[A-Za-z0-9_.\-]{1,100}$")
#: Default lease of a step, in seconds: how long a worker owns a run while it runs a step.
DEFAULT_LEASE = 60.0


class DefinitionError(ValueError):
    """A workflow definition that cannot run (bad name, duplicate step, missing callable)."""


class UnknownWorkflowError(LookupError):
    """A workflow name no registered definition carries (is its module imported here?)."""

    code = "unknown_workflow"

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f'workflow: no definition named "{name}" is registered '
            "(define it in an installed app's workflows.py, or import its module)"
        )


@dataclass
class StepContext:
    """What a step's ``execute`` or ``compensate`` callable receives.

    ``results`` holds the recorded results of the steps before this one (by name),
    ``signals`` the payloads of the signals the run received so far; both are read from
    the store on first access, so a step that reads neither costs no query. ``using`` is the
    Django database alias of the ``db`` adapter (``None`` on ``memory``): writes through
    it join the step's transaction, so they commit exactly once with the step's record.
    ``result`` is this step's own recorded result (set when compensating) and ``error``
    the failure that started the compensation.
    """

    run_id: str
    workflow: str
    step: str
    attempt: int
    input: Any
    instance: str = "default"
    using: str | None = None
    result: Any = None
    error: str = ""
    compensating: bool = False
    _heartbeat: Callable[[], bool] | None = field(default=None, repr=False)
    _results: Any = field(default=None, repr=False)
    _signals: Any = field(default=None, repr=False)

    @property
    def results(self) -> dict[str, Any]:
        """Return the recorded results of the completed steps, by step name."""
        if callable(self._results):
            self._results = self._results()
        return self._results if self._results is not None else {}

    @property
    def signals(self) -> dict[str, Any]:
        """Return the payloads of the signals the run received, by signal name."""
        if callable(self._signals):
            self._signals = self._signals()
        return self._signals if self._signals is not None else {}

    @property
    def idempotency_key(self) -> str:
        """Return ``<run id>:<step>``: a key for calls outside the database (payments, mail)."""
        suffix = ":compensate" if self.compensating else ""
        return f"{self.run_id}:{self.step}{suffix}"

    def heartbeat(self) -> bool:
        """Extend this worker's lease on the run; ``False`` when the lease was lost."""
        return self._heartbeat() if self._heartbeat is not None else True


def _policy(value: Any, where: str) -> RetryPolicy:
    if value is None:
        return ResilienceRetryPolicy()
    if isinstance(value, str):  # a resilience instance: its configured retry block
        from toolkit_batteries.core.config import Config

        options = Config.of(None).service("resilience", value).options
        return options.retry if options.retry is not None else ResilienceRetryPolicy()
    from toolkit_batteries.queue.jobs.backoff import retry_policy

    return retry_policy(value, where=where)


@dataclass(frozen=True)
class Step:
    """One named step: run ``execute`` (once signal ``wait_for`` came), undo with ``compensate``.

    ``retry`` is the resilience battery's retry policy: a ``RetryPolicy``, a mapping of
    the spec's retry keys, or the name of a ``TOOLKIT["resilience"]`` instance whose
    ``retry`` block to use; unset, a step gets the resilience defaults (3 attempts, 50 ms
    doubling to 2 s, 10 % jitter). ``atomic`` (default) runs ``execute`` in one database
    transaction with the step's record on the ``db`` adapter. ``pivot`` marks the saga's
    point of no return: once it completed, later failures are not compensated.
    """

    name: str
    execute: Callable[[StepContext], Any] | str | None = None
    compensate: Callable[[StepContext], Any] | str | None = None
    wait_for: str = ""
    retry: RetryPolicy | Mapping[str, Any] | str | None = None
    pivot: bool = False
    atomic: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise DefinitionError('a step name is 1 to 100 letters, digits, "_", ".", ":" or "-"')
        if self.execute is None and not self.wait_for:
            raise DefinitionError(f'step "{self.name}": give execute, wait_for, or both')
        if self.wait_for and not _NAME.match(str(self.wait_for)):
            raise DefinitionError(f'step "{self.name}": wait_for is not a valid signal name')
        for role in ("execute", "compensate"):
            value = getattr(self, role)
            if value is not None and not (callable(value) or isinstance(value, str)):
                raise DefinitionError(f'step "{self.name}": {role} must be a callable or a name')
        object.__setattr__(self, "retry", _policy(self.retry, f"workflow step {self.name}"))

    @property
    def policy(self) -> RetryPolicy:
        """Return the step's retry policy (always a ``RetryPolicy`` after construction)."""
        return self.retry  # type: ignore[return-value]


@dataclass(frozen=True)
class WorkflowDefinition:
    """A named, ordered list of steps; ``queue`` is the job queue its step runner uses.

    ``pivot`` names the pivot step (the same as ``Step(pivot=True)``); ``lease`` is the
    seconds a worker owns a run while running one step (keep steps shorter, or call
    ``ctx.heartbeat()``).
    """

    name: str
    steps: Sequence[Step]
    pivot: str = ""
    queue: str = "default"
    lease: float = DEFAULT_LEASE

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise DefinitionError(
                'a workflow name is 1 to 100 letters, digits, "_", ".", ":" or "-"'
            )
        steps = tuple(self.steps)
        if not steps:
            raise DefinitionError(f'workflow "{self.name}" has no steps')
        names = [step.name for step in steps]
        if len(set(names)) != len(names):
            raise DefinitionError(f'workflow "{self.name}" repeats a step name')
        if not isinstance(self.queue, str) or not _QUEUE.match(self.queue):
            raise DefinitionError(f'workflow "{self.name}": queue is not a valid job queue name')
        if not self.lease or self.lease <= 0:
            raise DefinitionError(f'workflow "{self.name}": lease must be positive')
        pivots = [i for i, step in enumerate(steps) if step.pivot or step.name == self.pivot]
        if self.pivot and self.pivot not in names:
            raise DefinitionError(f'workflow "{self.name}": pivot names no step')
        if len(pivots) > 1:
            raise DefinitionError(f'workflow "{self.name}" has more than one pivot step')
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "_pivot_index", pivots[0] if pivots else -1)

    @property
    def pivot_index(self) -> int:
        """Return the pivot step's index, or -1 when the whole run can be compensated."""
        return int(getattr(self, "_pivot_index", -1))

    def past_pivot(self, completed: int) -> bool:
        """Tell whether ``completed`` finished steps include the pivot (asked every step)."""
        return 0 <= self.__dict__.get("_pivot_index", -1) < completed


# ---------------------------------------------------------------------- registries

_lock = threading.Lock()
_definitions: dict[str, WorkflowDefinition] = {}
_functions: dict[str, Callable[..., Any]] = {}
_discovered = False


def register(workflow: WorkflowDefinition, *, replace: bool = False) -> WorkflowDefinition:
    """Add ``workflow`` to the process registry; a different one under a taken name fails."""
    if not isinstance(workflow, WorkflowDefinition):
        raise TypeError("register takes a WorkflowDefinition")
    with _lock:
        existing = _definitions.get(workflow.name)
        if existing is not None and existing != workflow and not replace:
            raise DefinitionError(f'workflow "{workflow.name}" is already registered')
        _definitions[workflow.name] = workflow
    return workflow


def definitions() -> dict[str, WorkflowDefinition]:
    """Return a copy of the registered definitions by name."""
    with _lock:
        return dict(_definitions)


def definition(name: str) -> WorkflowDefinition:
    """Return the definition ``name``, importing apps' ``workflows`` modules once if needed."""
    global _discovered
    found = _definitions.get(name)
    if found is None and not _discovered:
        _discovered = True
        from django.utils.module_loading import autodiscover_modules

        autodiscover_modules("workflows")
        found = _definitions.get(name)
    if found is None:
        raise UnknownWorkflowError(name)
    return found


def step_function(func: Callable[..., Any] | None = None, *, name: str | None = None) -> Any:
    """Register a callable under ``name`` (default ``module.qualname``) for ``execute=name``."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        key = name or f"{function.__module__}.{function.__qualname__}"
        with _lock:
            _functions[key] = function
        return function

    return decorate(func) if func is not None else decorate


def resolve_callable(value: Callable[..., Any] | str) -> Callable[..., Any]:
    """Return the callable a step names: itself, a registered name, or a dotted path."""
    if callable(value):
        return value
    found = _functions.get(value)
    if found is not None:
        return found
    from django.utils.module_loading import import_string

    try:
        imported = import_string(value)
    except ImportError:
        raise DefinitionError(
            f'no step function is registered or importable as "{value}"'
        ) from None
    if not callable(imported):
        raise DefinitionError(f'"{value}" is not callable')
    return imported
