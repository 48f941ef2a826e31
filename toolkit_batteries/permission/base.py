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

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service

from .errors import PermissionDeniedError

__all__ = [
    "Authorizer",
    "OwnedBy",
    "OwnedByCaller",
    "PermissionDeniedError",
    "Subject",
    "load_resource_roles",
    "owns",
    "subject_of",
    "unwrap",
]


#: The ``resource_roles`` hook: ``(subject, resource) -> the subject's roles on it``.
ResourceRoles = Callable[["Subject", Any], Iterable[str]]


def load_resource_roles(path: str, instance: str = "default") -> ResourceRoles | None:
    """Import the ``resource_roles`` hook named by ``path`` (``None`` when empty)."""
    from toolkit_batteries.core.errors import InvalidOptionsError
    from toolkit_batteries.core.loading import import_dotted

    if not path:
        return None
    try:
        hook = import_dotted(path)
    except LookupError:
        hook = None
    if not callable(hook):
        raise InvalidOptionsError(
            "permission",
            "resource_roles",
            "does not name an importable callable (subject, resource) -> roles",
            instance=instance,
        )
    return hook


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


class OwnedBy:
    """A resource with the owner field its route names (the schema's ``owner_field``).

    ``check(subject, action, obj, owner_field="owner")`` hands adapters this wrapper, so
    every owned-only rule compares that one field, whatever attribute the rule names:
    the schema is the one place that says who owns an object. Attribute and key reads
    pass through to the object, so matchers and hooks see the resource as it is.
    """

    __slots__ = ("obj", "owner_field")

    def __init__(self, obj: Any, owner_field: str) -> None:
        self.obj = obj
        self.owner_field = owner_field

    def __getattr__(self, name: str) -> Any:
        return getattr(self.obj, name)

    def __getitem__(self, key: str) -> Any:
        return self.obj[key]

    def __repr__(self) -> str:
        return f"<OwnedBy {self.owner_field}: {self.obj!r}>"


class OwnedByCaller:
    """A stand-in for "some object the caller owns" (model-level questions).

    :meth:`Authorizer.holds` asks the adapter about it: :func:`owns` says the caller owns
    it under every attribute, and attribute or key reads return the caller's id.
    """

    __slots__ = ("subject_id",)

    def __init__(self, subject_id: str) -> None:
        self.subject_id = subject_id

    def __getattr__(self, name: str) -> str:
        return self.subject_id

    def __getitem__(self, key: str) -> str:
        return self.subject_id

    def __repr__(self) -> str:
        return "<an object the caller owns>"


def unwrap(resource: Any) -> Any:
    """Return the object itself when ``resource`` is an :class:`OwnedBy` wrapper."""
    return resource.obj if type(resource) is OwnedBy else resource


def owns(resource: Any, attribute: str, subject_id: str) -> bool:
    """Tell whether ``resource``'s ``attribute`` holds ``subject_id`` (compared as text).

    For an :class:`OwnedBy` resource the route's owner field is compared instead of
    ``attribute`` (``attribute`` may then be empty: "the owner, as the route says").
    """
    if type(resource) is OwnedByCaller:
        return resource.subject_id == subject_id
    if type(resource) is OwnedBy:
        resource, attribute = resource.obj, resource.owner_field
    if resource is None or not attribute:
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
        self,
        *,
        grants: Mapping[str, Sequence[str]] | None = None,
        instance: str = "default",
        resource_roles: ResourceRoles | None = None,
    ) -> None:
        self.instance = instance
        self._grants: dict[str, frozenset[str]] = {
            str(sid): frozenset(roles) for sid, roles in (grants or {}).items()
        }
        self._resource_roles = resource_roles

    @classmethod
    def base_kwargs(cls, ctx: Any) -> dict[str, Any]:
        """Return the keywords every adapter's ``open`` passes to this base.

        ``grants`` (the ``roles`` option), ``instance``, and the ``resource_roles`` hook
        imported from its dotted path (a path that does not name a callable fails the
        open, naming the field).
        """
        options = ctx.options
        return {
            "grants": options.roles,
            "instance": ctx.instance,
            "resource_roles": load_resource_roles(
                getattr(options, "resource_roles", ""), ctx.instance
            ),
        }

    def check(
        self, subject: Any, action: str, resource: Any = None, *, owner_field: str | None = None
    ) -> bool:
        """Return whether ``subject`` may perform ``action`` (on ``resource``, if given).

        ``owner_field`` is the resource's field that holds its owner, as the route
        declares it (the schema's ``owner_field``): owned-only rules compare that field.
        """
        if not isinstance(action, str) or not action:
            raise ValueError("permission: the action must be a non-empty string")
        # A Subject is the common caller (every Django has_perm): read it without a call.
        if type(subject) is Subject:
            sid, roles = subject.id, subject.roles
            if not sid:
                sid, roles = subject_of(subject)  # raises the empty-id error
        else:
            sid, roles = subject_of(subject)
        effective = self.effective_roles(sid, roles) if self._grants else roles
        if resource is not None and self._resource_roles is not None:
            effective = self._with_resource_roles(sid, effective, resource)
        if owner_field and resource is not None:
            resource = OwnedBy(resource, owner_field)
        return self._decide(sid, effective, action, resource)

    def _with_resource_roles(
        self, subject_id: str, roles: tuple[str, ...], resource: Any
    ) -> tuple[str, ...]:
        """Add the roles the ``resource_roles`` hook gives the subject on ``resource``."""
        assert self._resource_roles is not None
        extra = self._resource_roles(Subject(subject_id, roles), resource)
        if isinstance(extra, str):
            raise TypeError("permission: resource_roles must return a list of roles, not a str")
        added = tuple(role for role in extra or () if role and role not in roles)
        return roles + added if added else roles

    def holds(self, subject: Any, action: str) -> bool:
        """Return whether ``subject`` may perform ``action`` on *some* object.

        Allowed without a resource, or on an object the subject owns: "may this caller
        edit anything at all?" (an edit button). Never an answer for every object, which
        is why Django's model-level ``has_perm`` (``PermissionBackend``) does not use it.
        """
        if not isinstance(action, str) or not action:
            raise ValueError("permission: the action must be a non-empty string")
        sid, roles = subject_of(subject)
        effective = self.effective_roles(sid, roles)
        return self._decide(sid, effective, action, None) or self._decide(
            sid, effective, action, OwnedByCaller(sid)
        )

    def require(
        self, subject: Any, action: str, resource: Any = None, *, owner_field: str | None = None
    ) -> None:
        """Return if ``subject`` may do ``action``; else raise :class:`PermissionDeniedError`."""
        if not self.check(subject, action, resource, owner_field=owner_field):
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
