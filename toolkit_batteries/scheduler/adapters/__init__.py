"""The scheduler adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so croniter costs nothing
to a project that never schedules. The spec's ``sqlserver`` adapter (slots coordinated
through SQL across processes) is not implemented: naming it fails with the list of
available adapters. ``embedded`` coordinates processes by claiming each slot on the
``lock`` service (shared when that is ``kvserver``).
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "embedded": "toolkit_batteries.scheduler.adapters.embedded.EmbeddedScheduler",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {}
