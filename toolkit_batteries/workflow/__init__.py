"""The ``workflow`` battery: durable runs of named steps, with saga compensation.

Get the configured service from the registry (``services.workflow()``) or a container;
pick ``memory`` (the default, one process) or ``db`` / ``sqlserver`` (rows in SQL) in
settings. Define workflows with :class:`WorkflowDefinition` and :class:`Step`, register
them (an installed app's ``workflows.py`` is imported on every worker), ``start`` runs,
and run ``manage.py queue_work``: each step is a job on the queue
battery.
"""

from __future__ import annotations

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
