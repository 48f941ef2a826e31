"""Who may call a generated action: ``auth`` (``Public``/``Bearer``) and ``permission: check``.

A generated viewset's ``auth`` and ``checks`` maps hold these declarations; the DRF
authenticators and permissions they turn into are built here, lazily, so importing the
API runtime does not import the auth or permission batteries until a guarded action runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from rest_framework.permissions import BasePermission


@dataclass(frozen=True, slots=True)
class Public:
    """``auth: none``: no authentication, anyone may call."""


@dataclass(frozen=True, init=False, slots=True)
class Bearer:
    """``auth: required`` (``Bearer()``) or ``auth: required(roles: {a})`` (``Bearer("a")``)."""

    roles: tuple[str, ...]

    def __init__(self, *roles: str) -> None:
        object.__setattr__(self, "roles", tuple(roles))


_PUBLIC = Public()


@cache
def _any_role_required() -> type[BasePermission]:
    """Return the permission of ``auth: required(roles: {a, b})``: any one listed role passes.

    The schema language's roles are alternatives (docs/schema-language.md): a caller
    holding none of them is refused with 403, one of them is enough. ``BearerRequired``
    still answers 401 for an anonymous caller.
    """
    from rest_framework.exceptions import PermissionDenied

    from toolkit_batteries.auth.drf import BearerRequired

    class _NoRoles:
        required_roles: tuple[str, ...] = ()

    class AnyRoleRequired(BearerRequired):
        def has_permission(self, request: Any, view: Any) -> bool:
            super().has_permission(request, _NoRoles())  # 401 without a valid bearer token
            accepted = tuple(getattr(view, "required_roles", ()) or ())
            if accepted and not any(request.user.has_roles(role) for role in accepted):
                raise PermissionDenied(self.message, code="permission_denied")
            return True

    return AnyRoleRequired


def _bearer_authenticators() -> tuple[Any, ...]:
    """Return the authenticators of a guarded action (one shared, stateless instance)."""
    global _BEARER
    if _BEARER is None:
        from toolkit_batteries.auth.drf import BearerAuthentication

        _BEARER = (BearerAuthentication(),)
    return _BEARER


_BEARER: tuple[Any, ...] | None = None


@dataclass(frozen=True, slots=True)
class Check:
    """``permission: check("action", ...)``: the action, and whether a resource is loaded.

    ``on_object`` is true when the rpc names its ``resource:`` object (a parameter named
    like the entity's primary key, or ``<entity>_id``): the generated action loads it and
    calls :meth:`GeneratedViewSet.authorize`. Otherwise the check runs before the action,
    without a resource.
    """

    action: str
    on_object: bool = False
    #: The schema's ``owner_field``: the field owned-only rules compare ("" = the rule's).
    owner_field: str = ""
    #: The action that reads the same object (its ``GET`` rpc's check), so a refused
    #: write answers 403 to a caller who may read the object, 404 to one who may not.
    read: str = ""


def _rpc_permission() -> BasePermission:
    """Return the permission battery's DRF permission, deciding object rpcs on the object.

    ``HasPermission`` decides a request without a resource in ``has_permission``; an rpc
    with a ``resource:`` is decided by :meth:`GeneratedViewSet.authorize` on the loaded
    object (``check_object_permissions``), so ``has_permission`` only authenticates.
    """
    global _RPC_PERMISSION
    if _RPC_PERMISSION is None:
        from toolkit_batteries.permission.drf import HasPermission

        class RpcPermission(HasPermission):
            def has_permission(self, request: Any, view: Any) -> bool:
                if getattr(view.checks.get(view.action), "on_object", False):
                    self._subject(request)  # 401 without a bearer caller
                    return True
                return super().has_permission(request, view)

        _RPC_PERMISSION = RpcPermission
    return _RPC_PERMISSION()


_RPC_PERMISSION: Any = None
