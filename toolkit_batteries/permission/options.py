"""Options of the ``permission`` service (authorization checks)."""

from __future__ import annotations

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


@options_class
class PermissionOptions:
    """Options of ``permission``; adapters ``noop`` (default), ``rbac`` and ``policyfile``."""

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
