"""The user object a bearer token stands for (no database row behind it)."""

from __future__ import annotations

from typing import Any

from .base import Claims

__all__ = ["TokenUser"]


class TokenUser:
    """An authenticated caller known only by its verified token.

    It quacks like ``request.user`` where views need it (``is_authenticated``, ``pk``,
    ``get_username()``). ``has_perm`` asks Django's authentication backends as a Django
    user's does, so with the permission battery's ``PermissionBackend`` listed the
    battery's rules decide for the token's subject and roles (``ModelBackend`` finds no
    rows for it: no groups, no permissions).
    """

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False

    def __init__(self, claims: Claims) -> None:
        self.claims = claims

    @property
    def id(self) -> str:
        """Return the token's subject."""
        return self.claims.subject

    pk = id

    @property
    def username(self) -> str:
        """Return the token's subject (there is no separate user name)."""
        return self.claims.subject

    @property
    def roles(self) -> tuple[str, ...]:
        """Return the roles the token carries."""
        return self.claims.roles

    def has_roles(self, *roles: str) -> bool:
        """Tell whether the token carries every one of ``roles``."""
        return self.claims.has_roles(*roles)

    def get_username(self) -> str:
        """Return the subject, as ``AbstractBaseUser.get_username`` would."""
        return self.claims.subject

    def has_perm(self, perm: str, obj: Any = None) -> bool:
        """Ask every ``AUTHENTICATION_BACKENDS`` entry, as a Django user's ``has_perm`` does.

        With ``toolkit_batteries.permission.backends.PermissionBackend`` listed, the
        permission battery's rules decide for the token's subject and roles; Django's
        ``ModelBackend`` grants a token user nothing (it has no permission rows).
        """
        from django.contrib.auth.models import _user_has_perm

        return _user_has_perm(self, perm, obj)

    def has_perms(self, perms: Any, obj: Any = None) -> bool:
        """Return whether every permission of ``perms`` is held (see :meth:`has_perm`)."""
        if isinstance(perms, str) or not hasattr(perms, "__iter__"):
            raise ValueError("perms must be an iterable of permissions.")
        return all(self.has_perm(perm, obj) for perm in perms)

    def has_module_perms(self, app_label: str) -> bool:
        """Ask every authentication backend whether any permission of the app is held."""
        from django.contrib.auth.models import _user_has_module_perms

        return _user_has_module_perms(self, app_label)

    def get_all_permissions(self, obj: Any = None) -> set[str]:
        """Return the permissions the backends can list (rules are never listed)."""
        from django.contrib.auth.models import _user_get_permissions

        return _user_get_permissions(self, obj, "all")

    @property
    def groups(self) -> Any:
        """Return an empty manager: a token user belongs to no Django group."""
        from django.contrib.auth.models import Group
        from django.db.models.manager import EmptyManager

        return EmptyManager(Group)

    @property
    def user_permissions(self) -> Any:
        """Return an empty manager: a token user has no permission rows."""
        from django.contrib.auth.models import Permission
        from django.db.models.manager import EmptyManager

        return EmptyManager(Permission)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TokenUser) and other.claims.subject == self.claims.subject

    def __hash__(self) -> int:
        return hash(("TokenUser", self.claims.subject))

    def __str__(self) -> str:
        return self.claims.subject

    def __repr__(self) -> str:
        return f"<TokenUser {self.claims.subject!r} roles={list(self.claims.roles)!r}>"
