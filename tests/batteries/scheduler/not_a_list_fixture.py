"""A schedule module whose SCHEDULES is not a list (discovery must refuse it)."""

from __future__ import annotations

SCHEDULES = "0 * * * *"
