"""Options of the ``permission`` service (authorization checks)."""

from __future__ import annotations

from toolkit_batteries.core.option_kinds import file_exists, opens, relation, warn_when_set
from toolkit_batteries.core.options import Where, option, options_class

__all__ = ["PermissionOptions", "PermissionRule"]


@options_class
class PermissionRule:
    """One authorization rule; the spec spells its keys capitalized (``OwnedOnly``).

    Keys match ignoring case and underscores, so ``OwnedOnly`` and ``owned_only`` agree.
    """

    role: str = option("", doc="role the rule applies to")
    action: str = option("", doc="action the rule applies to")
    effect: str = option("allow", choices=("allow", "deny"), doc="allow or deny; empty = allow")
    owned_only: bool = option(False, doc="restrict to resources owned by the subject")
    owned_attr: str = option(
        "", doc="resource attribute carrying the owner id; default: the route's owner_field"
    )


_IGNORED = 'is set but the "{adapter}" adapter ignores it'
_IGNORED_HINT = (
    "remove it, or pick the adapter that reads it "
    "(rules: rbac; model_path, policy_path: policyfile)"
)
_UNREADABLE = "does not name a readable file"


@options_class
class PermissionOptions:
    """Options of ``permission``; adapters ``noop`` (default), ``rbac`` and ``policyfile``."""

    __checks__ = (
        warn_when_set(
            "toolkit_permission.W001", _IGNORED, adapters=("noop", "policyfile"), hint=_IGNORED_HINT
        ).on("rules"),
        warn_when_set(
            "toolkit_permission.W001", _IGNORED, adapters=("noop", "rbac"), hint=_IGNORED_HINT
        ).on("model_path", "policy_path"),
        relation(
            "toolkit_permission.W002",
            lambda o: None if o.rules else 'the rbac adapter has no "rules": every check is denied',
            adapters=("rbac",),
            warning=True,
            hint="add rules (Role, Action, Effect, OwnedOnly, OwnedAttr)",
        ),
        file_exists(
            "toolkit_permission.E002",
            missing=_UNREADABLE,
            absent=_UNREADABLE,
            readable=True,
            adapters=("policyfile",),
            hint="the policyfile adapter needs a pycasbin model file and a policy file",
        ).on("model_path", "policy_path"),
        opens(
            "toolkit_permission.E005",
            "toolkit_batteries.permission.base:load_resource_roles",
            skip_empty=True,
            hint="a dotted path to a function (subject, resource) -> roles",
        ).on("resource_roles"),
    )

    model_path: str = option("", doc="policy-file engine model path")
    policy_path: str = option("", doc="policy-file engine policy path")
    roles: dict[str, tuple[str, ...]] = option({}, doc="subject id to the roles it may be granted")
    rules: tuple[PermissionRule, ...] = option([], doc="authorization rules")
    resource_roles: str = option(
        "", doc="dotted path of (subject, resource) -> the subject's roles on that resource"
    )

    def validate(self, where: Where) -> None:
        """Reject rules that cannot match as written.

        A rule needs a ``Role`` and an ``Action`` (``*`` for any). An ``OwnedOnly`` rule
        without ``OwnedAttr`` compares the owner field the checked route declares (the
        schema's ``owner_field``), and matches nothing where no route declares one.
        Fields are named as decoded (``rules[2].role``), the reason gives the spec's
        spelling.
        """
        for index, rule in enumerate(self.rules):
            for key, value in (("role", rule.role), ("action", rule.action)):
                if not value.strip():
                    raise where.invalid(
                        f"rules[{index}].{key}",
                        f'is required ({key.capitalize()}; use "*" for any)',
                    )
