"""The ``workflow`` battery: durable runs of named steps, with saga compensation.

Get the configured service from the registry (``services.workflow()``) or a container;
pick ``memory`` (the default, one process) or ``db`` / ``sqlserver`` (rows in SQL) in
settings. Define workflows with :class:`WorkflowDefinition` and :class:`Step`, register
them (an installed app's ``workflows.py`` is imported on every worker), ``start`` runs,
and run ``manage.py queue_work``: each step is a job on the queue
battery.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import ADVANCE_JOB, RunNotFoundError, Workflow, WorkflowClosedError
    from .definition import (
        DefinitionError,
        Step,
        StepContext,
        UnknownWorkflowError,
        WorkflowDefinition,
        definition,
        definitions,
        register,
        step_function,
    )
    from .records import RunInfo, RunStatus, StepInfo
    from .signals import step_recorded

__all__ = [
    "ADVANCE_JOB",
    "DefinitionError",
    "RunInfo",
    "RunNotFoundError",
    "RunStatus",
    "Step",
    "StepContext",
    "StepInfo",
    "UnknownWorkflowError",
    "Workflow",
    "WorkflowClosedError",
    "WorkflowDefinition",
    "definition",
    "definitions",
    "register",
    "step_function",
    "step_recorded",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "ADVANCE_JOB": "base",
    "DefinitionError": "definition",
    "RunInfo": "records",
    "RunNotFoundError": "base",
    "RunStatus": "records",
    "Step": "definition",
    "StepContext": "definition",
    "StepInfo": "records",
    "UnknownWorkflowError": "definition",
    "Workflow": "base",
    "WorkflowClosedError": "base",
    "WorkflowDefinition": "definition",
    "definition": "definition",
    "definitions": "definition",
    "register": "definition",
    "step_function": "definition",
    "step_recorded": "signals",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
