"""System checks of the ``geo`` battery (``manage.py check``).

Shape rules are declared on the options and reported by the core check
(:mod:`toolkit_batteries.core.option_kinds`) after ``E001`` (the adapter resolves):

* ``toolkit_geo.E002``: ``geo_a`` without ``api_key``.
* ``toolkit_geo.E003``: ``base_url`` (``geo_a``) or ``endpoint`` (``geo_b``) breaks the
  outbound rules (http without ``allow_insecure``, a loopback or private literal host
  without ``allow_private``, credentials, query or fragment).
* ``toolkit_geo.E004``: ``geo_b`` without a usable ``user_agent``.
* ``toolkit_geo.E005``: the ``static`` adapter's ``path`` resolves outside the project
  root or names a file that does not exist.
* ``toolkit_geo.E006``: ``timeout`` or ``max_response_body`` is negative.

Messages name instances and fields, never values. Nothing connects; no file is parsed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


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
        checks.Error(
            f'{where}: option "path" {reason}',
            hint="point path at a JSON gazetteer file inside BASE_DIR, or leave it unset",
            obj=_OBJ,
            id="toolkit_geo.E005",
        )
    ]


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check that every ``static`` instance's file is inside the project and exists."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "geo"):
        if adapter == "static":
            found.extend(_static(f"geo.{cfg.instance}", cfg.options.path, cfg.instance))
    return found
