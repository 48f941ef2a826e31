"""Behaviour checks of ``permission``; every ID is in docs/batteries/permission.md, "Checks".

Shape rules (ignored options, readable files, the ``resource_roles`` hook) are declared on
the options. Here: ``E003`` (the policy files load), and :func:`fail_open_checks`
(registered by the generated-API runtime): ``E004``/``W003`` and ``W004``. Messages name
instances and fields, never values (paths included). Nothing connects.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from django.core import checks

from toolkit_batteries.core.checks import error, resolved_instances, warning
from toolkit_batteries.core.errors import InvalidOptionsError

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks", "fail_open_checks"]


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check that every ``policyfile`` instance's files load (``E002`` reports unreadable ones)."""
    from .adapters.policyfile import PolicyFileAuthorizer

    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "permission"):
        paths = (cfg.options.model_path, cfg.options.policy_path)
        if adapter != "policyfile" or not all(
            p and os.path.isfile(p) and os.access(p, os.R_OK) for p in paths
        ):
            continue
        try:
            PolicyFileAuthorizer(*paths, instance=cfg.instance)
        except InvalidOptionsError as exc:
            hint = "see docs/batteries/permission.md for the model the adapter expects"
            found.append(error("toolkit_permission.E003", str(exc), hint))
    return found


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
        if development:
            found.append(warning("toolkit_permission.W003", message, hint))
        else:
            found.append(error("toolkit_permission.E004", message, hint))
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
                    warning(
                        "toolkit_permission.W004",
                        f"permission.{rpc.instance}: rules[{index}] names OwnedAttr "
                        f'"{rule.owned_attr}" but {rpc.rpc} declares owner_field '
                        f'"{rpc.owner_field}"; the schema\'s owner_field is compared',
                        "drop OwnedAttr from the rule (the schema names the owner) "
                        "or change the schema's owner_field",
                    )
                )
    return found
