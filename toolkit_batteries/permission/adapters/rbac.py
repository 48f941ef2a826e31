"""The ``rbac`` adapter: the ``rules`` option, evaluated in process.

A rule matches a check when its ``Role`` is one of the subject's effective roles (or
``*``: any subject), its ``Action`` is the checked action (or ``*``: any action), and,
for an ``OwnedOnly`` rule, the resource's owner holds the subject id: the owner field the
checked route declares (the schema's ``owner_field``) when it declares one, else the
rule's ``OwnedAttr``.

**Deny wins**: one matching ``deny`` rule refuses, whatever allows; otherwise one matching
``allow`` rule allows; no matching rule refuses (default deny).

The rules are indexed by action when the service opens, so a check walks only the rules
that name its action or ``*``.
"""

from __future__ import annotations

from typing import Any

from toolkit_batteries.core.adapter import OpenContext

from ..base import Authorizer, owns

__all__ = ["RBACAuthorizer"]

#: One compiled rule: (role, is_deny, owned-only, owner attribute; "" = the route's field).
CompiledRule = tuple[str, bool, bool, str]


class RBACAuthorizer(Authorizer):
    """Decide from role rules; deny wins, default deny."""

    adapter_name = "rbac"

    def __init__(self, rules: Any = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        wildcard: list[CompiledRule] = []
        by_action: dict[str, list[CompiledRule]] = {}
        for rule in rules:
            compiled = (
                rule.role,
                (rule.effect or "allow").lower() == "deny",
                bool(rule.owned_only),
                rule.owned_attr if rule.owned_only else "",
            )
            if rule.action == "*":
                wildcard.append(compiled)
            else:
                by_action.setdefault(rule.action, []).append(compiled)
        self._wildcard: tuple[CompiledRule, ...] = tuple(wildcard)
        self._index: dict[str, tuple[CompiledRule, ...]] = {
            action: (*named, *wildcard) for action, named in by_action.items()
        }

    @classmethod
    def open(cls, ctx: OpenContext) -> RBACAuthorizer:
        """Compile ``rules`` (already validated when the configuration loaded)."""
        options = ctx.options
        return cls(options.rules, **cls.base_kwargs(ctx))

    def _decide(self, subject_id: str, roles: tuple[str, ...], action: str, resource: Any) -> bool:
        allowed = False
        for role, deny, owned_only, attribute in self._index.get(action, self._wildcard):
            if role != "*" and role not in roles:
                continue
            if owned_only and not owns(resource, attribute, subject_id):
                continue
            if deny:
                return False
            allowed = True
        return allowed
