"""The user object a bearer token stands for (no database row behind it)."""

from __future__ import annotations

from typing import Any

from .base import Claims

__all__ = ["TokenUser"]


class TokenUser:
    """An authenticated caller known only by its verified token.

    It quacks like ``request.user`` where views need it (``is_authenticated``, ``pk``,
    ``get_username()``) but grants nothing through Django's permission system:
    ``has_perm`` is always False, roles come from the token and are checked explicitly
    (``BearerRequired`` and ``required_roles``).
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
        """Grant nothing through Django permissions; authorization is the permission service."""
        return False

    def has_perms(self, perms: Any, obj: Any = None) -> bool:
        """Grant nothing through Django permissions."""
        return False

    def has_module_perms(self, app_label: str) -> bool:
        """Grant nothing through Django permissions."""
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TokenUser) and other.claims.subject == self.claims.subject

    def __hash__(self) -> int:
        return hash(("TokenUser", self.claims.subject))

    def __str__(self) -> str:
        return self.claims.subject

    def __repr__(self) -> str:
        return f"<TokenUser {self.claims.subject!r} roles={list(self.claims.roles)!r}>"
