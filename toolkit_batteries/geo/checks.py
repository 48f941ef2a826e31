"""Behaviour check of ``geo``; every ID is in docs/batteries/geo.md, "Checks".

Shape rules are declared on the options. Here: ``E005``, the ``static`` gazetteer file is
inside the project and exists. Messages name fields, never values (paths included).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import error, resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]


def _static(where: str, path: str, instance: str) -> list[checks.CheckMessage]:
    from .adapters.static import guarded_path, project_root

    if not (path or "").strip():
        return []
    try:
        target = guarded_path(path.strip(), project_root(), instance=instance)
    except InvalidOptionsError as exc:
        reason = exc.reason
    else:
        if target.is_file():
            return []
        reason = "names a file that does not exist"
    return [
        error(
            "toolkit_geo.E005",
            f'{where}: option "path" {reason}',
            "point path at a JSON gazetteer file inside BASE_DIR, or leave it unset",
        )
    ]


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check that every ``static`` instance's file is inside the project and exists."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "geo"):
        if adapter == "static":
            found.extend(_static(f"geo.{cfg.instance}", cfg.options.path, cfg.instance))
    return found
