"""The permission service: what a verified caller may do (who it is comes from ``auth``).

Every adapter subclasses :class:`Authorizer`; the base turns the caller into a subject id
and its *effective* roles, and the adapter decides::

    authorizer = services.permission()
    authorizer.check(request.auth, "post.edit", post)      # True / False
    authorizer.require(request.auth, "post.edit", post)    # or PermissionDeniedError

The subject is the auth battery's verified :class:`~toolkit_batteries.auth.Claims`
(``request.auth``), a :class:`~toolkit_batteries.auth.TokenUser` (``request.user``), a
:class:`Subject`, or a bare subject id (no roles).

**Effective roles.** The roles a subject asserts (its token's ``roles`` claim) count only
if the ``roles`` option lets that subject hold them: with a non-empty ``roles`` map, a
subject's effective roles are its asserted roles that its entry lists (a subject without
an entry has none); with an empty map, every asserted role counts.

**Ownership.** An owned-only rule matches only a resource whose owner attribute (a
mapping key or an object attribute, ``OwnedAttr``) equals the subject id, compared as
text (so an integer or UUID owner column works). No resource, or a missing or ``None``
attribute, never matches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import ToolkitError

__all__ = ["Authorizer", "PermissionDeniedError", "Subject", "owns", "subject_of"]


class PermissionDeniedError(ToolkitError):
    """The subject may not perform the action; HTTP layers answer ``403``.

    The message names the action, never the subject's roles or the resource.
    """

    code = "permission_denied"

    def __init__(self, action: str) -> None:
        self.action = action
        super().__init__(f'permission denied for action "{action}"')


@dataclass(frozen=True, slots=True)
class Subject:
    """A caller as the authorizer sees it: an id and the roles it holds."""

    id: str
    roles: tuple[str, ...] = ()


def subject_of(subject: Any) -> tuple[str, tuple[str, ...]]:
    """Return ``(id, asserted roles)`` of a :class:`Subject`, ``Claims``, ``TokenUser`` or id.

    Raises ``TypeError`` for anything else and ``ValueError`` for an empty id: an
    unidentified caller is never authorized.
    """
    sid: Any
    roles: Any
    if isinstance(subject, str):
        sid, roles = subject, ()
    elif isinstance(subject, Subject):
        sid, roles = subject.id, subject.roles
    else:
        claims = getattr(subject, "claims", subject)  # TokenUser wraps Claims
        sid = getattr(claims, "subject", None)
        roles = getattr(claims, "roles", None)
        if not isinstance(sid, str) or not isinstance(roles, tuple):
            raise TypeError(
                "permission: the subject must be a Subject, auth Claims, a TokenUser "
                "or a subject id string"
            )
    if not sid:
        raise ValueError("permission: the subject id is empty")
    return sid, roles


def owns(resource: Any, attribute: str, subject_id: str) -> bool:
    """Tell whether ``resource``'s ``attribute`` holds ``subject_id`` (compared as text)."""
    if resource is None:
        return False
    if isinstance(resource, Mapping):
        value = resource.get(attribute)
    else:
        value = getattr(resource, attribute, None)
    if value is None:
        return False
    return (value if isinstance(value, str) else str(value)) == subject_id


class Authorizer(Service):
    """Interface of every permission adapter: decide whether a subject may act.

    Adapters implement :meth:`_decide` on the subject id, its effective roles, the action
    and the resource; the base does the argument checks and the ``roles`` map.
    """

    service_name: ClassVar[str] = "permission"

    #: Instance name the container opened this adapter as (``"default"``).
    instance: str = "default"

    def __init__(
        self, *, grants: Mapping[str, Sequence[str]] | None = None, instance: str = "default"
    ) -> None:
        self.instance = instance
        self._grants: dict[str, frozenset[str]] = {
            str(sid): frozenset(roles) for sid, roles in (grants or {}).items()
        }

    def check(self, subject: Any, action: str, resource: Any = None) -> bool:
        """Return whether ``subject`` may perform ``action`` (on ``resource``, if given)."""
        if not isinstance(action, str) or not action:
            raise ValueError("permission: the action must be a non-empty string")
        sid, roles = subject_of(subject)
        return self._decide(sid, self.effective_roles(sid, roles), action, resource)

    def require(self, subject: Any, action: str, resource: Any = None) -> None:
        """Return if ``subject`` may do ``action``; else raise :class:`PermissionDeniedError`."""
        if not self.check(subject, action, resource):
            raise PermissionDeniedError(action)

    def effective_roles(self, subject_id: str, asserted: tuple[str, ...]) -> tuple[str, ...]:
        """Return the asserted roles the ``roles`` option lets ``subject_id`` hold."""
        grants = self._grants
        if not grants:
            return asserted
        allowed = grants.get(subject_id)
        if not allowed:
            return ()
        return tuple(role for role in asserted if role in allowed)

    def _decide(self, subject_id: str, roles: tuple[str, ...], action: str, resource: Any) -> bool:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} permission.{self.instance}>"
