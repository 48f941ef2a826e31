"""The ``workflow`` battery: durable runs of named steps, with saga compensation.

Get the configured service from the registry (``services.workflow()``) or a container;
pick ``memory`` (the default, one process) or ``db`` / ``sqlserver`` (rows in SQL) in
settings. Define workflows with :class:`WorkflowDefinition` and :class:`Step`, register
them (an installed app's ``workflows.py`` is imported on every worker), ``start`` runs,
and run ``manage.py queue_work``: each step is a job on the queue
battery.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="ADVANCE_JOB RunNotFoundError Workflow WorkflowClosedError",
    definition=(
        "DefinitionError Step StepContext UnknownWorkflowError WorkflowDefinition definition "
        "definitions register step_function"
    ),
    records="RunInfo RunStatus StepInfo",
    signals="step_recorded",
)
