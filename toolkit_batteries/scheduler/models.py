"""The ``sqlserver`` scheduler's claims table, as a Django model (``manage.py migrate``).

One row per (schedule, slot) some scheduler process dispatched. The unique constraint
on ``(name, slot)`` is what makes a claim exclusive: the adapter inserts with
``INSERT ... ON CONFLICT DO NOTHING`` and only the process whose row went in dispatches.
"""

from __future__ import annotations

from django.db import models

from toolkit_batteries.core.tables import table_meta

__all__ = ["SchedulerClaim"]


class SchedulerClaim(models.Model):
    """One claimed (schedule, slot): who claimed it and when."""

    #: ``"<scheduler instance>:<schedule>"``, as ``"default:digest"``.
    name = models.CharField(max_length=255)
    #: The slot's minute in UTC, as ``"2025-01-06T08:00Z"``.
    slot = models.CharField(max_length=32)
    #: Epoch seconds by the claiming scheduler's clock (pruning compares with it).
    claimed_at = models.FloatField(db_index=True)
    #: ``"<host>:<pid>:<token>"`` of the claiming scheduler.
    claimed_by = models.CharField(max_length=255)

    Meta = table_meta(
        "toolkit_scheduler_claim",
        "slot claim",
        unique={"toolkit_scheduler_claim_once": ("name", "slot")},
    )

    def __str__(self) -> str:
        return f"{self.name} @ {self.slot}"
