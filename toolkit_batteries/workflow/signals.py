"""Django signals of the workflow battery."""

from __future__ import annotations

from django.dispatch import Signal

__all__ = ["step_recorded"]

#: Sent after a step's (or a compensation's) record committed, before the next step is
#: queued, with ``instance``, ``run_id``, ``workflow``, ``step``, ``index`` and
#: ``compensating``. Receivers run in the worker; an exception in one propagates.
step_recorded = Signal()
