"""The errors of the workflow battery, in one module.

The modules that defined them before re-import them, so old import paths keep working.
The definition errors stay in :mod:`.definition` (imported with the package, so it must
import nothing else of the battery) and are re-exported here.
"""

from __future__ import annotations

from toolkit_batteries.core.errors import ToolkitError

from .definition import DefinitionError, UnknownWorkflowError

__all__ = [
    "DefinitionError",
    "RunNotFoundError",
    "UnknownWorkflowError",
    "WorkflowClosedError",
]


class RunNotFoundError(ToolkitError, LookupError):
    """No run with that id in this workflow instance's namespace."""

    code = "not_found"

    def __init__(self, instance: str) -> None:
        super().__init__(f"workflow.{instance}: no run with that id")


class WorkflowClosedError(ToolkitError, RuntimeError):
    """A call on a workflow service after its container closed it."""

    code = "unavailable"

    def __init__(self, instance: str) -> None:
        super().__init__(f"workflow.{instance} is closed")
