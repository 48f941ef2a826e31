"""The ``noop`` adapter (the default): every check allows.

It is what a project gets before it configures authorization: views guarded by
:class:`~toolkit_batteries.permission.drf.HasPermission` or ``require_permission`` still
need a verified bearer token, but any verified caller may do anything. Pick ``rbac`` or
``policyfile`` to restrict. Served schema routes with ``permission: check(...)`` on
``noop`` are the system check error ``toolkit_permission.E004`` outside development, and
Django's ``has_perm`` (``PermissionBackend``) is granted nothing by ``noop``.
"""

from __future__ import annotations

from typing import Any

from toolkit_batteries.core.adapter import OpenContext

from ..base import Authorizer

__all__ = ["NoopAuthorizer"]


class NoopAuthorizer(Authorizer):
    """Allow every action to every identified subject."""

    adapter_name = "noop"

    @classmethod
    def open(cls, ctx: OpenContext) -> NoopAuthorizer:
        """Open the allow-all authorizer (the ``roles`` map still filters roles)."""
        return cls(**cls.base_kwargs(ctx))

    def _decide(self, subject_id: str, roles: tuple[str, ...], action: str, resource: Any) -> bool:
        return True
