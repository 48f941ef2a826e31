"""System checks of the ``permission`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_permission.E001`` (each instance's adapter resolves):

* ``toolkit_permission.E002``: ``policyfile`` without a readable ``model_path`` or
  ``policy_path``.
* ``toolkit_permission.E003``: ``policyfile`` files that pycasbin cannot load as a model
  and policy of three request fields (``sub, obj, act``), or whose matcher fails.
* ``toolkit_permission.W001``: an option the instance's adapter ignores is set
  (``rules`` on ``policyfile``, ``model_path``/``policy_path`` on ``rbac``, either on
  ``noop``).
* ``toolkit_permission.W002``: ``rbac`` with no ``rules``: every check is denied.

Messages name instances and fields, never values (paths included). Nothing connects.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config, ServiceConfig

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"

#: Options each adapter reads, of those only some adapters read.
_READS = {
    "noop": frozenset(),
    "rbac": frozenset({"rules"}),
    "policyfile": frozenset({"model_path", "policy_path"}),
}


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``permission`` instance's adapter-specific options."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "permission"):
        where, options = f"permission.{cfg.instance}", cfg.options
        reads = _READS.get(adapter)
        if reads is not None:
            for field in ("rules", "model_path", "policy_path"):
                if getattr(options, field) and field not in reads:
                    found.append(
                        checks.Warning(
                            f'{where}: option "{field}" is set but the "{adapter}" '
                            "adapter ignores it",
                            hint="remove it, or pick the adapter that reads it "
                            "(rules: rbac; model_path, policy_path: policyfile)",
                            obj=_OBJ,
                            id="toolkit_permission.W001",
                        )
                    )
        if adapter == "rbac" and not options.rules:
            found.append(
                checks.Warning(
                    f'{where}: the rbac adapter has no "rules": every check is denied',
                    hint="add rules (Role, Action, Effect, OwnedOnly, OwnedAttr)",
                    obj=_OBJ,
                    id="toolkit_permission.W002",
                )
            )
        if adapter == "policyfile":
            found.extend(_policyfile_checks(where, cfg))
    return found


def _policyfile_checks(where: str, cfg: ServiceConfig) -> list[checks.CheckMessage]:
    options = cfg.options
    missing = [
        field
        for field in ("model_path", "policy_path")
        if not getattr(options, field)
        or not os.path.isfile(getattr(options, field))
        or not os.access(getattr(options, field), os.R_OK)
    ]
    if missing:
        return [_e002(where, field) for field in missing]
    from .adapters.policyfile import PolicyFileAuthorizer

    try:
        PolicyFileAuthorizer(
            options.model_path,
            options.policy_path,
            instance=cfg.instance,
        )
    except InvalidOptionsError as exc:
        return [
            checks.Error(
                str(exc),
                hint="see docs/batteries/permission.md for the model the adapter expects",
                obj=_OBJ,
                id="toolkit_permission.E003",
            )
        ]
    return []


def _e002(where: str, field: str) -> checks.CheckMessage:
    return checks.Error(
        f'{where}: option "{field}" does not name a readable file',
        hint="the policyfile adapter needs a pycasbin model file and a policy file",
        obj=_OBJ,
        id="toolkit_permission.E002",
    )
