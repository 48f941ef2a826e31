"""The ``db`` adapter's tables, as Django models (``manage.py migrate`` creates them).

* :class:`WorkflowRun`: one row per run, scoped by ``namespace``; the lease
  (``lease_owner``, ``lease_until``) says which worker runs its current step and until
  when; ``current`` is the next step (or, compensating, the next step to undo).
* :class:`WorkflowStep`: one row per recorded step of a run (its JSON result, attempts,
  and whether it was compensated), unique by ``(run, index)``.
* :class:`WorkflowSignal`: signals delivered to a run, unique by ``(run, name)``.

Times are Unix seconds by the service's clock, so queries compare with parameters and
never with the server's ``now()``. Table names come from the ``table`` option
(:mod:`.tables`).
"""

from __future__ import annotations

from django.db import models

from .records import RunStatus
from .tables import configured_table, signal_table, step_table

__all__ = ["WorkflowRun", "WorkflowSignal", "WorkflowStep"]

_RUNS = configured_table()


class WorkflowRun(models.Model):
    """One run of a workflow definition."""

    id = models.CharField(primary_key=True, max_length=64)
    namespace = models.CharField(max_length=64, default="default")
    workflow = models.CharField(max_length=100)
    status = models.CharField(
        max_length=24, choices=[(s, s.replace("_", " ")) for s in RunStatus.ALL]
    )
    input = models.JSONField(null=True)
    result = models.JSONField(null=True)
    error = models.TextField(blank=True, default="")
    current = models.IntegerField(default=0, help_text="next step (compensating: next to undo)")
    attempt = models.IntegerField(default=0, help_text="attempts of the current step")
    waiting_for = models.CharField(max_length=100, blank=True, default="")
    cancel_requested = models.BooleanField(default=False)
    lease_owner = models.CharField(max_length=32, blank=True, default="")
    lease_until = models.FloatField(default=0.0, help_text="Unix seconds")
    run_after = models.FloatField(default=0.0, help_text="Unix seconds")
    created_at = models.FloatField(help_text="Unix seconds")
    updated_at = models.FloatField(help_text="Unix seconds")

    class Meta:
        app_label = "toolkit_workflow"
        db_table = _RUNS
        verbose_name = "workflow run"
        verbose_name_plural = "workflow runs"
        indexes = [
            models.Index(fields=["namespace", "status", "run_after"], name="toolkit_wf_claimable"),
            models.Index(fields=["namespace", "created_at"], name="toolkit_wf_created"),
        ]

    def __str__(self) -> str:
        return f"{self.workflow} {self.id}"


class WorkflowStep(models.Model):
    """One recorded step (or compensation) of a run."""

    run = models.ForeignKey(WorkflowRun, on_delete=models.CASCADE, related_name="steps")
    index = models.IntegerField()
    name = models.CharField(max_length=100)
    status = models.CharField(max_length=24)
    result = models.JSONField(null=True)
    attempts = models.IntegerField(default=0)
    error = models.TextField(blank=True, default="")
    finished_at = models.FloatField(default=0.0, help_text="Unix seconds")
    compensated_at = models.FloatField(default=0.0, help_text="Unix seconds")

    class Meta:
        app_label = "toolkit_workflow"
        db_table = step_table(_RUNS)
        verbose_name = "workflow step"
        verbose_name_plural = "workflow steps"
        ordering = ("run", "index")
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="toolkit_wf_step_index")
        ]

    def __str__(self) -> str:
        return f"{self.index}: {self.name}"


class WorkflowSignal(models.Model):
    """A signal delivered to a run."""

    run = models.ForeignKey(WorkflowRun, on_delete=models.CASCADE, related_name="signals")
    name = models.CharField(max_length=100)
    payload = models.JSONField(null=True)
    created_at = models.FloatField(help_text="Unix seconds")

    class Meta:
        app_label = "toolkit_workflow"
        db_table = signal_table(_RUNS)
        verbose_name = "workflow signal"
        verbose_name_plural = "workflow signals"
        constraints = [
            models.UniqueConstraint(fields=["run", "name"], name="toolkit_wf_signal_name")
        ]

    def __str__(self) -> str:
        return self.name
