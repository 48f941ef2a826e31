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
* ``toolkit_permission.E005``: ``resource_roles`` does not import a callable.

:func:`fail_open_checks` (registered by the generated-API runtime) adds
``toolkit_permission.E004``/``W003`` (served ``permission: check`` rpcs on ``noop`` or
without the battery) and ``W004`` (a rule's ``OwnedAttr`` against the schema's
``owner_field``).

Messages name instances and fields, never values (paths included). Nothing connects.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

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
        if options.resource_roles:
            from .base import load_resource_roles

            try:
                load_resource_roles(options.resource_roles, cfg.instance)
            except InvalidOptionsError as exc:
                found.append(
                    checks.Error(
                        str(exc),
                        hint="a dotted path to a function (subject, resource) -> roles",
                        obj=_OBJ,
                        id="toolkit_permission.E005",
                    )
                )
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


#: Most rpc names a fail-open message lists before "and N more".
_LISTED = 5


def fail_open_checks(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Report served ``permission: check`` rpcs that nothing would refuse.

    Registered by the generated-API runtime (``toolkit_batteries.api_runtime``), so it runs
    whether or not the permission battery is installed. A check decided by ``noop`` allows
    every token holder; so does a project without the battery (nothing configures it).
    Outside development that is ``toolkit_permission.E004``, an error that stops
    ``manage.py check --deploy`` and ``toolkit serve``; in development a warning
    (``toolkit_permission.W003``) says the same, so the schema can be written first.
    """
    del app_configs, kwargs
    from django.apps import apps

    from toolkit_batteries.core.checks import toolkit_settings
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.loading import resolve_adapter
    from toolkit_batteries.serving import is_development

    from .routes import guarded_rpcs

    guarded = guarded_rpcs()
    if not guarded:
        return []
    installed = apps.is_installed("toolkit_batteries.permission")
    try:
        config = Config.load(
            {k: v for k, v in toolkit_settings().items() if str(k).lower() == "permission"},
            os.environ,
        )
    except Exception:  # toolkit_batteries.E001 reports a block that does not load
        return []
    open_by: dict[str, list[str]] = {}
    for rpc in guarded:
        try:
            adapter, _ = resolve_adapter(
                "permission", config.service("permission", rpc.instance).adapter
            )
        except Exception:  # toolkit_permission.E001 reports it
            continue
        if adapter == "noop" or not installed:
            open_by.setdefault(rpc.instance, []).append(rpc.rpc)
    development = is_development()
    found: list[checks.CheckMessage] = _owner_mismatches(config, guarded)
    for instance, rpcs in open_by.items():
        listed = ", ".join(rpcs[:_LISTED])
        if len(rpcs) > _LISTED:
            listed += f" and {len(rpcs) - _LISTED} more"
        why = (
            "the permission battery is not installed"
            if not installed
            else f'permission.{instance} uses the "noop" adapter'
        )
        message = (
            f"permission checks fail open: {why}, so every token holder passes "
            f"the permission: check of {listed}"
        )
        pick = "rbac (with rules) or policyfile"
        hint = (
            "run `toolkit add permission/rbac` (the app and an rbac block), then write "
            "its rules; docs/batteries/permission.md"
            if not installed
            else f"set PERMISSION__{instance.upper()}__ADAPTER to {pick}; "
            "docs/batteries/permission.md"
        )
        cls = checks.Warning if development else checks.Error
        check_id = "toolkit_permission.W003" if development else "toolkit_permission.E004"
        found.append(cls(message, hint=hint, obj=_OBJ, id=check_id))
    return found


def _owner_mismatches(config: Config, guarded: list[Any]) -> list[checks.CheckMessage]:
    """Report ``rbac`` rules whose ``OwnedAttr`` differs from the schema's ``owner_field``.

    The route's ``owner_field`` is what an owned-only rule compares; a rule naming another
    attribute for the same action says something the code does not do
    (``toolkit_permission.W004``).
    """
    from toolkit_batteries.core.loading import resolve_adapter

    found: list[checks.CheckMessage] = []
    for rpc in guarded:
        if not rpc.owner_field:
            continue
        try:
            cfg = config.service("permission", rpc.instance)
            adapter, _ = resolve_adapter("permission", cfg.adapter)
        except Exception:  # toolkit_permission.E001 reports it
            continue
        if adapter != "rbac":
            continue
        for index, rule in enumerate(cfg.options.rules):
            if (
                rule.owned_only
                and rule.owned_attr
                and rule.owned_attr != rpc.owner_field
                and rule.action in (rpc.action, "*")
            ):
                found.append(
                    checks.Warning(
                        f"permission.{rpc.instance}: rules[{index}] names OwnedAttr "
                        f'"{rule.owned_attr}" but {rpc.rpc} declares owner_field '
                        f'"{rpc.owner_field}"; the schema\'s owner_field is compared',
                        hint="drop OwnedAttr from the rule (the schema names the owner) "
                        "or change the schema's owner_field",
                        obj=_OBJ,
                        id="toolkit_permission.W004",
                    )
                )
    return found
