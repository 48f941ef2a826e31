"""``PermissionBackend``: Django's ``has_perm`` answered by the permission battery.

Listed in ``AUTHENTICATION_BACKENDS`` (after ``ModelBackend``)::

    AUTHENTICATION_BACKENDS = [
        "django.contrib.auth.backends.ModelBackend",
        "toolkit_batteries.permission.backends.PermissionBackend",
    ]

every permission question Django asks goes through ``services.permission()`` as well as
Django's own tables: ``user.has_perm("notes.change_note", note)``, ``has_perms``,
``@permission_required`` and ``PermissionRequiredMixin``, DRF's ``DjangoModelPermissions``
and ``DjangoObjectPermissions``, and the admin (``has_module_perms``, ``view_<model>``).
The permission string is the action (``"notes.change_note"``), so ``rbac`` rules and
policy lines name Django's permissions as they name any other action.

The subject is a bearer-token user (``TokenUser``: its subject and roles) or a Django
user (its primary key as text; its roles are the names of its groups). A grant here adds
to what ``ModelBackend`` grants; a refusal takes nothing away (Django asks every backend
and any grant wins), so authorization that must refuse is written as rules, not as
missing rows.

* ``obj`` given: the adapter decides on that object (owned-only rules see its owner).
* ``obj=None`` (model level): the adapter decides without a resource, so owned-only rules
  do not grant it. Django reads a model-level grant as "on every object": the admin and
  ``PermissionRequiredMixin`` never ask about the object, so granting "change notes"
  because the user owns *some* note would let them change all of them. Rules that
  ``DjangoObjectPermissions`` refines per object are an unconditional allow (the
  model-level pass) plus owned-only denies, or a view of your own that asks ``check()``.
* ``noop`` grants nothing through this backend: allowing every permission to every user
  (the admin included) is never what an unconfigured project means.

This backend authenticates nobody (``authenticate`` returns ``None``).
"""

from __future__ import annotations

import contextlib
from typing import Any

from django.contrib.auth.backends import BaseBackend

from .base import Subject

__all__ = ["PermissionBackend", "subject_for_user"]


def subject_for_user(user: Any) -> Subject | None:
    """Return the :class:`Subject` of a ``TokenUser`` or a Django user; None if anonymous.

    The answer is cached on the user object (``_toolkit_subject``), as ``ModelBackend``
    caches a user's permissions on it: one request asks ``has_perm`` many times (the admin
    asks once per model), and the user's id and groups do not change within it.
    """
    cached = getattr(user, "_toolkit_subject", None)
    if cached is not None:
        return cached
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    claims = getattr(user, "claims", None)
    if claims is not None:  # a TokenUser: the verified token says who and which roles
        subject_id = getattr(claims, "subject", "")
        subject = Subject(subject_id, tuple(claims.roles)) if subject_id else None
    elif user.pk is None:
        return None
    else:
        roles = getattr(user, "_toolkit_roles", None)
        if roles is None:
            groups = getattr(user, "groups", None)
            names = groups.values_list("name", flat=True) if groups is not None else ()
            roles = tuple(sorted(names))
            user._toolkit_roles = roles
        subject = Subject(str(user.pk), roles)
    if subject is not None:
        # A user class with __slots__ cannot hold it: the subject is built again next time.
        with contextlib.suppress(AttributeError):
            user._toolkit_subject = subject
    return subject


def _services() -> Any:
    """Return :mod:`toolkit_batteries.services`, imported on first use (it needs settings)."""
    global _SERVICES
    if _SERVICES is None:
        from toolkit_batteries import services

        _SERVICES = services
    return _SERVICES


_SERVICES: Any = None


class PermissionBackend(BaseBackend):
    """Answer Django's permission questions with ``services.permission(instance)``."""

    #: The permission instance asked; a subclass may name another.
    instance = "default"

    def authenticate(self, request: Any, **credentials: Any) -> None:
        """Authenticate nobody: this backend only answers permission questions."""
        del request, credentials
        return None

    def has_perm(self, user_obj: Any, perm: str, obj: Any = None) -> bool:
        """Return whether the adapter allows ``perm`` (on ``obj``, or with no resource)."""
        if not perm or not isinstance(perm, str) or not getattr(user_obj, "is_active", False):
            return False
        subject = subject_for_user(user_obj)
        if subject is None:
            return False
        authorizer = (_SERVICES or _services()).permission(self.instance)
        if authorizer.adapter_name == "noop":
            return False
        return authorizer.check(subject, perm, obj)

    def has_module_perms(self, user_obj: Any, app_label: str) -> bool:
        """Return whether ``user_obj`` holds a view/add/change/delete permission in the app."""
        from django.apps import apps
        from django.contrib.auth import get_permission_codename

        try:
            config = apps.get_app_config(app_label)
        except LookupError:
            return False
        for model in config.get_models():
            for verb in model._meta.default_permissions:
                codename = get_permission_codename(verb, model._meta)
                if self.has_perm(user_obj, f"{app_label}.{codename}"):
                    return True
        return False

    def get_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        """Return nothing: rules grant by question, they cannot be listed as rows."""
        del user_obj, obj
        return set()
